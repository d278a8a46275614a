// Inspection: the one place that knows the stages of compiling a kernel
// (blocc::Stage in blocc/kernel.h): their names, which targets have which,
// what BLOCC_DUMP asks for, and how each text is made. Kernel::asm_for,
// Python's kernel.asm (through bindings/export's C interface) and
// BLOCC_DUMP all get their texts from compile_stages, so they show the
// same text for the same specialization and target.
#pragma once

#include "blocc/kernel.h"
#include "ir/function.h"

#include <memory>
#include <string>

namespace blocc::detail {

/// One traced specialization of a kernel, as launches and inspection see
/// it (the JIT's cache holds one per specialization key).
struct Specialization {
  std::string kernel;
  std::string constants; ///< Stages::specialization: "BLOCK=1024"
  std::string traced;    ///< Stage::Traced
  std::string ir;        ///< Stage::Ir: `function` printed
  std::unique_ptr<ir::Function> function; ///< what backends compile
};

/// A set of stages: bit (1 << stage) per member.
using StageSet = unsigned;
constexpr StageSet stage_bit(Stage stage) {
  return 1u << static_cast<unsigned>(stage);
}
StageSet stages_of(const Target &target);

/// The stages $BLOCC_DUMP names, read now: none when it is unset or
/// empty; else a comma-separated list of stage names (stage_name), `all`,
/// or `llvm` (the older name of `llir`). Throws blocc::Error naming the
/// valid names for anything else.
StageSet dump_request();

/// The stages of `wanted` that `target` has, of `specialization` compiled
/// for `target`. Throws blocc::Error for a bad target (an unknown GPU
/// architecture, a num_warps that is no power of two from 1 to 32), a
/// backend this build lacks, and ops the backend does not lower.
Stages compile_stages(const Specialization &specialization,
                      const Target &target, StageSet wanted);

/// BLOCC_DUMP: prints to stderr each stage it asks for that `target` has,
/// of `specialization` compiled for `target`, under Stages::header; once
/// per specialization and target in the process. Launches call it as they
/// compile; unset, it costs reading the environment.
void dump_stages(const Specialization &specialization, const Target &target);

} // namespace blocc::detail
