// Entry points of the generic passes over the block IR. Each pass lives in
// its own file under ir/passes/; blocc-opt finds them by name through
// all_passes().
#pragma once

#include "ir/function.h"

#include <functional>
#include <string>
#include <vector>

namespace blocc::ir {

/// Checks structural and type rules; throws blocc::Error naming the op
/// (and the user's source line where known) on the first violation.
void verify(Function &f);

/// Rewrites every descriptor_load / descriptor_store (ir/tensor_descriptor.h)
/// into a block of pointers, a bounds mask and a masked load or store.
void rewrite_tensor_descriptors(Function &f);
/// The same for the accesses `which` accepts (every one where it is
/// empty); returns how many it rewrote.
int rewrite_tensor_descriptors(
    Function &f, const std::function<bool(const Operation &)> &which);
/// What a backend runs on its copy of a kernel: rewrite_tensor_descriptors
/// of the accesses `which` accepts, then canonicalize, cse and dce over the
/// arithmetic it built, where it rewrote any. Returns whether it did.
bool lower_tensor_descriptors(
    Function &f, const std::function<bool(const Operation &)> &which = {});
/// Whether `f` holds a descriptor_load or descriptor_store.
bool has_tensor_descriptors(const Function &f);
/// Constant folding, algebraic identities, broadcast/splat folding.
void canonicalize(Function &f);
/// Merges identical side-effect-free ops (same opcode, operands, attributes,
/// result types) where one dominates the other.
void cse(Function &f);
/// Removes side-effect-free ops whose results are unused, unused loop-carried
/// values, and empty control flow.
void dce(Function &f);

struct PassInfo {
  std::string name; // as named on blocc-opt's command line
  std::string description;
  void (*run)(Function &);
};
/// Every pass blocc-opt can run, in a stable order.
const std::vector<PassInfo> &all_passes();

/// The pipeline every traced kernel goes through before a backend sees it
/// (what BLOCC_DUMP=ir shows): canonicalize, cse, dce, in that order.
/// Descriptor accesses stay: each backend lowers them its own way
/// (lower_tensor_descriptors).
/// The frontend runs it, and blocc-opt's --pipeline=default runs the same
/// list, so that a pass-by-pass view shows exactly what the compiler does.
const std::vector<const PassInfo *> &default_pipeline();

/// Verifies `f`, runs default_pipeline() on it and verifies the result.
/// `after_pass` (optional) is called after each pass, before the final
/// verification (blocc-opt's --print-after-all).
void run_default_pipeline(
    Function &f,
    const std::function<void(const PassInfo &, Function &)> &after_pass = {});

} // namespace blocc::ir
