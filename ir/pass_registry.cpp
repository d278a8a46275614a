// The table blocc-opt uses to find passes by name. A pass appears here once,
// with a one-line description that `blocc-opt --help` prints.
#include "ir/passes.h"

namespace blocc::ir {

const std::vector<PassInfo> &all_passes() {
  static const std::vector<PassInfo> passes = {
      {"verify", "check operand/result types, shapes, regions and dominance",
       verify},
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

} // namespace blocc::ir
