// blocc-compile: ahead-of-time compilation of one kernel specialization to
// x86 object code and GPU code, with the C++ that launches it through the
// runtime alone (tools/README.md).
#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "tools/compile/cpp_names.h"
#include "tools/compile/generated_code.h"
#include "tools/compile/kernel_source.h"
#include "tools/compile/options.h"
#include "tools/compile/ptxas.h"

#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "backends/nvptx/gpu_backend.h"
#endif

#include <filesystem>
#include <fstream>
#include <iostream>

namespace blocc::compile {

namespace {

CpuCode compile_cpu(const ir::Function &function, const Specialization &s,
                    const Target &target) {
  cpu::ObjectOptions options;
  options.cpu = target.cpu;
  // "my::kernels" + "add_1024" -> blocc_aot_my_kernels_add_1024.
  std::string qualified = s.outer.empty() ? s.name : s.outer + "_" + s.name;
  for (size_t colons; (colons = qualified.find("::")) != std::string::npos;)
    qualified.replace(colons, 2, "_");
  options.symbol = "blocc_aot_" + identifier_from(qualified);
  cpu::ObjectCode code;
  try {
    code = cpu::compile_object(function, options);
  } catch (const Error &e) {
    throw Error("--target " + target.name + ": " + e.what());
  }
  CpuCode c;
  c.symbol = options.symbol;
  c.object = std::move(code.object);
  c.sites = std::move(code.sites);
  c.sites.name = s.name; // messages name the specialization
  c.scratch_bytes = code.scratch_bytes;
  c.target = code.target;
  c.features = std::move(code.features);
  return c;
}

bool same_sites(const std::vector<runtime::FaultSite> &a,
                const std::vector<runtime::FaultSite> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].op != b[i].op || a[i].message != b[i].message ||
        a[i].shape != b[i].shape || a[i].form != b[i].form)
      return false;
  return true;
}

/// PTX for every GPU target, and cubins of it where ptxas is (or must be)
/// used.
std::optional<GpuCode> compile_gpu(const ir::Function &function,
                                   const Options &options) {
  std::optional<GpuCode> gpu;
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  std::optional<cuda::PtxAssembler> ptxas;
  if (options.cubin != Cubin::Off)
    ptxas = find_ptxas();
  if (options.cubin == Cubin::On && !ptxas)
    throw Error("--cubin on: no ptxas on PATH (the CUDA toolkit's); add its "
                "bin directory to PATH, or leave cubins out (--cubin auto)");
  for (const Target &target : options.targets) {
    if (target.kind != Target::Kind::Gpu)
      continue;
    nvptx::CompileOptions compile;
    compile.num_warps = options.num_warps;
    compile.arch.sm = target.sm;
    compile.arch.arch_specific = target.arch_specific;
    nvptx::PtxCode code;
    try {
      code = nvptx::compile_ptx(function, compile);
    } catch (const Error &e) {
      throw Error("--target " + target.name + ": " + e.what());
    }
    if (!gpu) {
      gpu.emplace();
      gpu->entry = code.entry;
      gpu->num_warps = code.cta_warps;
      gpu->faults = code.faults;
    } else if (code.cta_warps != gpu->num_warps) {
      throw Error("--target " + target.name + ": the kernel runs " +
                  std::to_string(code.cta_warps) + " warps a CTA there, " +
                  std::to_string(gpu->num_warps) +
                  " on the first GPU target (a warp-specialized loop adds a "
                  "producer warpgroup on sm_90a only); compile those targets "
                  "separately");
    } else if (code.entry != gpu->entry ||
               !same_sites(code.faults, gpu->faults)) {
      throw Error("internal: --target " + target.name +
                  " lowered the kernel to other fault sites than the first "
                  "GPU target");
    }
    GpuImage image;
    image.sm = target.sm;
    image.arch_specific = target.arch_specific;
    image.dynamic_shared_bytes =
        static_cast<unsigned>(code.dynamic_shared_bytes);
    image.tensor_maps = std::move(code.tensor_maps);
    if (ptxas) {
      GpuImage cubin = image;
      cubin.cubin = true;
      try {
        cubin.bytes = cuda::assemble_ptx(*ptxas, code.ptx,
                                         "kernel '" + function.name() + "'");
      } catch (const Error &e) {
        throw Error("--target " + target.name + ": " + e.what());
      }
      gpu->images.push_back(std::move(cubin));
    }
    image.bytes = std::move(code.ptx);
    gpu->images.push_back(std::move(image));
  }
  if (gpu && !ptxas && options.cubin == Cubin::Auto)
    std::cerr << "blocc-compile: note: no ptxas on PATH, so no cubins: the "
                 "driver compiles the PTX at the first launch of each "
                 "process\n";
#else
  (void)function;
  (void)options;
#endif
  return gpu;
}

void write_file(const std::filesystem::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw Error("-o: cannot write '" + path.string() + "'");
}

int run(const Options &options) {
  LoadedKernel kernel = load_kernel(options);
  const Specialization &s = kernel.specialization;
  Compiled compiled;
  for (const Target &target : options.targets)
    if (target.kind == Target::Kind::Cpu)
      compiled.cpu = compile_cpu(*kernel.function, s, target);
  compiled.gpu = compile_gpu(*kernel.function, options);
  std::filesystem::path output(options.output);
  if (output.has_parent_path())
    std::filesystem::create_directories(output.parent_path());
  std::filesystem::path header = output, source = output, object = output;
  header += ".h";
  source += ".cpp";
  object += ".o";
  const std::string header_file = header.filename().string();
  if (compiled.cpu)
    write_file(object, compiled.cpu->object);
  write_file(header, header_text(s, compiled, header_file));
  write_file(source, source_text(s, compiled, header_file));
  return 0;
}

} // namespace

} // namespace blocc::compile

int main(int argc, char **argv) {
  using namespace blocc::compile;
  try {
    Options options =
        parse_options(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << usage();
      return 0;
    }
    return run(options);
  } catch (const std::exception &e) {
    std::cerr << "blocc-compile: error: " << e.what() << "\n";
    return 1;
  }
}
