#include "stages.h"

#include "executor.h"
#include "ir/error.h"

#ifdef BLOCC_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif
#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "backends/nvptx/gpu_backend.h"
#endif

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>
#include <utility>

namespace blocc {

namespace {

constexpr Stage kAllStages[] = {Stage::Traced, Stage::Ir,  Stage::Layouts,
                                Stage::Llir,   Stage::Ptx, Stage::Asm};

} // namespace

const char *stage_name(Stage stage) {
  switch (stage) {
  case Stage::Traced:
    return "traced";
  case Stage::Ir:
    return "ir";
  case Stage::Layouts:
    return "layouts";
  case Stage::Llir:
    return "llir";
  case Stage::Ptx:
    return "ptx";
  case Stage::Asm:
    return "asm";
  }
  return "?";
}

std::vector<Stage> Target::stages() const {
  std::vector<Stage> stages;
  for (Stage s : kAllStages)
    if (detail::stages_of(*this) & detail::stage_bit(s))
      stages.push_back(s);
  return stages;
}

std::string Target::str() const {
  switch (kind) {
  case Kind::Interpreter:
    return "interpreter";
  case Kind::Cpu:
    switch (check) {
    case Check::Bounds:
      return "cpu (checked: bounds)";
    case Check::Races:
      return "cpu (checked: races)";
    case Check::Default:
      return "cpu (checked as BLOCC_CHECK says)";
    default:
      return "cpu";
    }
  case Kind::Gpu:
    return arch + " (" + std::to_string(num_warps) +
           (num_warps == 1 ? " warp)" : " warps)");
  }
  return "?";
}

const std::string &Stages::operator[](Stage stage) const {
  for (const Text &t : texts)
    if (t.stage == stage)
      return t.text;
  std::string compiled;
  for (const Text &t : texts)
    compiled += std::string(compiled.empty() ? "" : ", ") + stage_name(t.stage);
  throw Error("kernel '" + kernel + "': no stage '" + stage_name(stage) +
              "' was compiled for " + target + " (compiled: " + compiled + ")");
}

std::string Stages::header(Stage stage) const {
  return std::string("// ===== blocc: ") + stage_name(stage) + " of kernel '" +
         kernel + "'" +
         (specialization.empty() ? "" : " (" + specialization + ")") + " for " +
         target;
}

} // namespace blocc

namespace blocc::detail {

namespace {

/// The valid BLOCC_DUMP values, for messages.
std::string dump_names() {
  std::string names;
  for (Stage s : kAllStages)
    names += std::string(stage_name(s)) + ", ";
  return names + "all (every stage), or llvm (another name for llir)";
}

[[noreturn, maybe_unused]] void
backend_missing(const Specialization &s, const char *which, const char *how) {
  throw Error("kernel '" + s.kernel + "': the " + which +
              " backend is not part of this build of blocc (" + how + ")");
}

/// The CPU backend's stages of `wanted`.
void compile_cpu_stages(const Specialization &s, const Target &target,
                        StageSet wanted, Stages &out) {
#ifdef BLOCC_HAVE_CPU_BACKEND
  const Check check = resolve_check(target.check);
  out.target = "cpu (" + cpu::target_description();
  if (check == Check::Bounds)
    out.target += "; checked: bounds";
  else if (check == Check::Races)
    out.target += "; checked: races";
  out.target += ")";
  cpu::InspectionRequest request;
  request.llvm_ir = wanted & stage_bit(Stage::Llir);
  request.assembly = wanted & stage_bit(Stage::Asm);
  request.check_bounds = check != Check::Off;
  request.detect_races = check == Check::Races;
  cpu::Inspection inspection = cpu::inspect(*s.function, request);
  if (request.llvm_ir)
    out.texts.push_back({Stage::Llir, std::move(inspection.llvm_ir)});
  if (request.assembly)
    out.texts.push_back({Stage::Asm, std::move(inspection.assembly)});
#else
  (void)target;
  (void)out;
  if (wanted & (stage_bit(Stage::Llir) | stage_bit(Stage::Asm)))
    backend_missing(s, "CPU",
                    "configure with LLVM >= 17 and -DBLOCC_CPU_BACKEND=ON");
#endif
}

/// The GPU backend's stages of `wanted`.
void compile_gpu_stages(const Specialization &s, const Target &target,
                        StageSet wanted, Stages &out) {
  if (target.num_warps <= 0 || target.num_warps > 32 ||
      (target.num_warps & (target.num_warps - 1)))
    throw Error("kernel '" + s.kernel +
                "': num_warps must be a power of two from 1 to 32, got " +
                std::to_string(target.num_warps));
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  nvptx::CompileOptions options;
  options.arch = nvptx::GpuArch::parse(target.arch);
  options.num_warps = target.num_warps;
  options.num_stages = target.num_stages;
  nvptx::InspectionRequest request;
  request.layouts = wanted & stage_bit(Stage::Layouts);
  request.llvm_ir = wanted & stage_bit(Stage::Llir);
  request.ptx = wanted & stage_bit(Stage::Ptx);
  nvptx::Inspection inspection = nvptx::inspect(*s.function, options, request);
  if (request.layouts)
    out.texts.push_back({Stage::Layouts, std::move(inspection.layouts)});
  if (request.llvm_ir)
    out.texts.push_back({Stage::Llir, std::move(inspection.llvm_ir)});
  if (request.ptx)
    out.texts.push_back({Stage::Ptx, std::move(inspection.ptx)});
#else
  (void)out;
  if (wanted & (stage_bit(Stage::Layouts) | stage_bit(Stage::Llir) |
                stage_bit(Stage::Ptx)))
    backend_missing(s, "GPU",
                    "configure with LLVM >= 17 built with the NVPTX target "
                    "and -DBLOCC_NVPTX_BACKEND=ON");
#endif
}

} // namespace

StageSet stages_of(const Target &target) {
  const StageSet shared = stage_bit(Stage::Traced) | stage_bit(Stage::Ir);
  switch (target.kind) {
  case Target::Kind::Cpu:
    return shared | stage_bit(Stage::Llir) | stage_bit(Stage::Asm);
  case Target::Kind::Gpu:
    return shared | stage_bit(Stage::Layouts) | stage_bit(Stage::Llir) |
           stage_bit(Stage::Ptx);
  default:
    return shared;
  }
}

StageSet dump_request() {
  const char *env = std::getenv("BLOCC_DUMP");
  if (!env || !*env)
    return 0;
  const std::string value = env;
  StageSet stages = 0;
  size_t begin = 0;
  while (begin <= value.size()) {
    size_t end = value.find(',', begin);
    if (end == std::string::npos)
      end = value.size();
    const std::string name = value.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty())
      continue;
    if (name == "all") {
      stages = ~0u;
      continue;
    }
    StageSet found = name == "llvm" ? stage_bit(Stage::Llir) : 0;
    for (Stage s : kAllStages)
      if (name == stage_name(s))
        found = stage_bit(s);
    if (!found)
      throw Error("BLOCC_DUMP='" + value + "': '" + name +
                  "' is not a stage; expected a comma-separated list of " +
                  dump_names());
    stages |= found;
  }
  return stages;
}

Stages compile_stages(const Specialization &specialization,
                      const Target &target, StageSet wanted) {
  Stages out;
  out.kernel = specialization.kernel;
  out.specialization = specialization.constants;
  out.target = target.str();
  wanted &= stages_of(target);
  // In pipeline order: the target-independent stages, then the backend's.
  if (wanted & stage_bit(Stage::Traced))
    out.texts.push_back({Stage::Traced, specialization.traced});
  if (wanted & stage_bit(Stage::Ir))
    out.texts.push_back({Stage::Ir, specialization.ir});
  if (target.kind == Target::Kind::Cpu)
    compile_cpu_stages(specialization, target, wanted, out);
  else if (target.kind == Target::Kind::Gpu)
    compile_gpu_stages(specialization, target, wanted, out);
  return out;
}

void dump_stages(const Specialization &specialization, const Target &target) {
  const StageSet wanted = dump_request() & stages_of(target);
  if (!wanted)
    return;
  static std::mutex mutex;
  static std::set<std::pair<uint64_t, std::string>> dumped;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!dumped.emplace(specialization.function->unique_id(), target.str())
             .second)
      return;
  }
  Stages stages = compile_stages(specialization, target, wanted);
  std::string text;
  for (const Stages::Text &t : stages.texts) {
    text += stages.header(t.stage) + "\n" + t.text;
    if (!t.text.empty() && t.text.back() != '\n')
      text += "\n";
  }
  // One write per kernel, so that kernels compiled on several threads at
  // once do not interleave.
  std::lock_guard<std::mutex> lock(mutex);
  std::cerr << text << std::flush;
}

} // namespace blocc::detail
