// The table blocc-opt uses to find passes by name (a pass appears here once,
// with a one-line description that `blocc-opt --list-passes` prints), and
// the default pipeline the JIT runs on every traced kernel.
#include "ir/passes.h"

#include "ir/error.h"

namespace blocc::ir {

const std::vector<PassInfo> &all_passes() {
  static const std::vector<PassInfo> passes = {
      {"verify", "check operand/result types, shapes, regions and dominance",
       verify},
      {"rewrite-tensor-descriptors",
       "rewrite descriptor loads and stores into pointer arithmetic, a bounds "
       "mask and masked loads and stores",
       rewrite_tensor_descriptors},
      {"canonicalize",
       "fold constants, apply algebraic identities, fold splats and "
       "broadcasts",
       canonicalize},
      {"cse", "merge identical side-effect-free operations", cse},
      {"dce",
       "remove unused side-effect-free operations, loop-carried values and "
       "empty control flow",
       dce},
  };
  return passes;
}

namespace {

const PassInfo &registered(const std::string &name) {
  for (const PassInfo &p : all_passes())
    if (p.name == name)
      return p;
  throw Error("internal: the default pipeline names an unregistered pass '" +
              name + "'");
}

} // namespace

const std::vector<const PassInfo *> &default_pipeline() {
  // Descriptor accesses stay whole: a GPU backend may copy their tiles
  // with the Tensor Memory Accelerator, and each backend rewrites the rest
  // itself (lower_tensor_descriptors).
  static const std::vector<const PassInfo *> pipeline = {
      &registered("canonicalize"), &registered("cse"), &registered("dce")};
  return pipeline;
}

void run_default_pipeline(
    Function &f,
    const std::function<void(const PassInfo &, Function &)> &after_pass) {
  verify(f);
  for (const PassInfo *pass : default_pipeline()) {
    pass->run(f);
    if (after_pass)
      after_pass(*pass, f);
  }
  verify(f);
}

} // namespace blocc::ir
