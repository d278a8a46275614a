// Whether a detail of a value's bits that the PTX lowering could leave to
// the hardware — a NaN's payload, the sign of a zero — can reach anything
// the kernel does. The question follows the value's uses: a rule says, per
// use, whether the user hides the detail (its result is the same either
// way), passes it on (its results differ in that detail only) or observes
// it. Control flow passes every detail on, whatever the rule: a loop's
// init and yielded values become its result and the body's argument for
// the next iteration, an if's yielded values its results. A Yield of any
// other region that the rule lets pass a detail on hands it to its
// parent's result of the same index; a region's other values are the
// rule's to judge through their users (a reduction that combines only by
// ops passing the detail on passes it on). Values that feed themselves
// through a loop are settled by reachability: a detail is observed when
// some chain of uses leads to an op that observes it.
//
// nan_blind_uses.cpp and unobserved_zero_signs.cpp are the two rules.
#pragma once

#include "ir/function.h"

#include <functional>
#include <map>
#include <set>
#include <vector>

namespace blocc::nvptx {

enum class UseEffect { Hides, PassesOn, Observes };

/// What `user` does with its operand number `operand`'s detail.
using UseRule =
    std::function<UseEffect(const ir::Operation &user, size_t operand)>;

class ObservedUses {
public:
  ObservedUses(const ir::Function &function, const UseRule &rule);

  /// Whether anything the kernel does depends on v's detail.
  bool observed(const ir::Value *v) const { return observed_.count(v) != 0; }

private:
  std::set<const ir::Value *> observed_;
};

/// A one-operand reduction whose combine is made of ops `allowed` accepts.
bool is_reduce_of(const ir::Operation &op,
                  const std::function<bool(ir::OpCode)> &allowed);

} // namespace blocc::nvptx
