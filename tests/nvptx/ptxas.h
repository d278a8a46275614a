// ptxas for the GPU backend's tests: the ptxas on PATH (the CUDA toolkit's;
// none needed), assembling the PTX blocc generates for sm_80 and sm_90, so
// that PTX the driver would reject fails a test even on a machine without a
// GPU. No gtest here: tests/nvptx (support.h) and the differential batch
// (tests/differential) both use it.
#pragma once

#include "backends/nvptx/gpu_backend.h"
#include "ir/function.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <unistd.h>

namespace blocc::gpu_testing {

/// The executable `name` from PATH, if any.
inline std::optional<std::string> on_path(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos)
      end = dirs.size();
    std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (!candidate.parent_path().empty() &&
        access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
    start = end + 1;
  }
  return std::nullopt;
}

/// ptxas from PATH, if any.
inline std::optional<std::string> ptxas() { return on_path("ptxas"); }

/// Whether the machine code of a cubin can be read here: ptxas, and the
/// toolkit's cuobjdump with the nvdisasm it runs, on PATH.
inline bool can_disassemble() {
  return ptxas() && on_path("cuobjdump") && on_path("nvdisasm");
}

struct PtxasResult {
  bool ok = false;
  std::string output; // what ptxas printed
};

/// `text` in a new temporary file named after `prefix`; "" where none
/// can be made.
inline std::string temporary_file(const std::string &text,
                                  const std::string &prefix) {
  std::string file =
      std::filesystem::temp_directory_path().string() + "/" + prefix + "XXXXXX";
  int fd = mkstemp(file.data());
  if (fd < 0)
    return "";
  close(fd);
  std::ofstream(file) << text;
  return file;
}

struct CommandResult {
  bool ok = false;
  std::string output; // what the command printed on its standard output
};

/// Runs `command` through the shell.
inline CommandResult run_command(const std::string &command) {
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  char buffer[512];
  while (pipe && fgets(buffer, sizeof buffer, pipe))
    output += buffer;
  int status = pipe ? pclose(pipe) : -1;
  return {status == 0, output};
}

/// Runs ptxas on `ptx` for `arch` with `flags` (such as "-v"). Requires
/// ptxas().
inline PtxasResult run_ptxas(const std::string &ptx, const std::string &arch,
                             const std::string &flags = "") {
  std::string file = temporary_file(ptx, "blocc_ptx_");
  if (file.empty())
    return {false, "cannot create a temporary file"};
  CommandResult r = run_command(*ptxas() + " " + flags + " -arch=" + arch +
                                " " + file + " -o /dev/null 2>&1");
  std::filesystem::remove(file);
  return {r.ok, r.output};
}

/// The SASS (machine code) ptxas makes of `ptx` for `arch`, as cuobjdump
/// -sass prints it; "" where either fails. Requires can_disassemble().
inline std::string sass_of(const std::string &ptx, const std::string &arch) {
  std::string file = temporary_file(ptx, "blocc_sass_");
  if (file.empty())
    return "";
  const std::string cubin = file + ".cubin";
  CommandResult r =
      run_command(*ptxas() + " -arch=" + arch + " " + file + " -o " + cubin +
                  " >/dev/null 2>&1 && " + *on_path("cuobjdump") + " -sass " +
                  cubin + " 2>/dev/null");
  std::filesystem::remove(file);
  std::filesystem::remove(cubin);
  return r.ok ? r.output : "";
}

/// How many times `what` occurs in `text` (a PTX or SASS listing).
inline int occurrences(const std::string &text, const std::string &what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

/// Assembles `ptx` with ptxas for `arch`; "" when it assembles, else
/// ptxas's complaint. Requires ptxas().
inline std::string ptxas_errors(const std::string &ptx,
                                const std::string &arch) {
  PtxasResult r = run_ptxas(ptx, arch);
  return r.ok ? "" : "ptxas -arch=" + arch + " failed:\n" + r.output;
}

/// The PTX the GPU backend generates for `function`.
inline std::string ptx_for(const ir::Function &function,
                           const std::string &arch = "sm_90",
                           int num_warps = 4) {
  nvptx::CompileOptions options;
  options.arch = nvptx::GpuArch::parse(arch);
  options.num_warps = num_warps;
  return nvptx::ptx_of(*nvptx::compile(function, options));
}

/// Whether `function` prints (device_print): vprintf takes its arguments
/// in a stack buffer, the one use of local memory blocc generates.
inline bool prints(const ir::Function &function) {
  bool found = false;
  const_cast<ir::Function &>(function).walk([&](ir::Operation &op) {
    found = found || op.code() == ir::OpCode::Print;
  });
  return found;
}

/// "" when `ptx` keeps every value in registers, else why not. blocc's
/// lowering needs no stack: a block value lives in registers, shared
/// memory holds what crosses threads. A local-memory frame (PTX's
/// __local_depot) in a kernel that does not print means LLVM legalized a
/// type through the stack, code the NVPTX backend and the driver's
/// assembler have got wrong before (ptxas stored one byte of a two-byte
/// vector from a register nothing wrote).
inline std::string local_memory_errors(const std::string &ptx,
                                       const ir::Function &function) {
  if (ptx.find("__local_depot") == std::string::npos || prints(function))
    return "";
  return "the PTX uses local memory (a stack frame) though the kernel "
         "needs none\n";
}

/// An integer min/max instruction in `ptx`, which the PTX assembler of CUDA
/// 13.0 miscompiles in chains (ptx_min_max_as_selects.h), or "".
inline std::string integer_min_max_errors(const std::string &ptx) {
  static const std::regex min_max(R"((^|[ \t])(min|max)\.[su](16|32|64)\s)",
                                  std::regex::multiline);
  std::smatch m;
  if (!std::regex_search(ptx, m, min_max))
    return "";
  return "the PTX has an integer min/max instruction: " +
         ptx.substr(size_t(m.position(0)), 40) + "\n";
}

/// Compiles `function` with `num_warps` warps for sm_80 and sm_90 and,
/// where ptxas is on PATH, assembles each PTX for its architecture: "" when
/// both assemble (or there is no ptxas) and neither uses local memory
/// (local_memory_errors) nor has an integer min/max
/// (integer_min_max_errors), else the complaint and the PTX. Throws what
/// compiling throws (blocc::Error naming an op the backend cannot lower).
inline std::string ptx_assembly_errors(const ir::Function &function,
                                       int num_warps = 4) {
  std::string errors;
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string ptx = ptx_for(function, arch, num_warps);
    std::string invariant =
        local_memory_errors(ptx, function) + integer_min_max_errors(ptx);
    if (!invariant.empty()) {
      errors += arch + std::string(": ") + invariant + "PTX:\n" + ptx;
      continue;
    }
    if (!ptxas())
      continue;
    std::string complaint = ptxas_errors(ptx, arch);
    if (!complaint.empty())
      errors += complaint + "PTX:\n" + ptx;
  }
  return errors;
}

} // namespace blocc::gpu_testing
