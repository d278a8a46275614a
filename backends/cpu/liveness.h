// Where values of a kernel are still needed: ops numbered in program order
// (a pre-order walk, regions inside their op), and for each value the last
// position that reads it. A read inside a loop body of a value defined
// outside the loop counts as a read at the loop's end, since the next
// iteration reads it again. The lowering uses this to evaluate a pending
// load before a later write while the load's value is still needed.
#pragma once

#include "ir/function.h"

#include <unordered_map>
#include <vector>

namespace blocc::cpu {

class Liveness {
public:
  explicit Liveness(const ir::Function &f);

  int position(const ir::Operation *op) const { return positions_.at(op); }
  /// The last position reading v (-1 when nothing reads it).
  int last_use(const ir::Value *v) const;
  /// The ops that read v, each once, in program order.
  const std::vector<const ir::Operation *> &users(const ir::Value *v) const;

private:
  std::unordered_map<const ir::Operation *, int> positions_;
  std::unordered_map<const ir::Operation *, int> ends_; // last nested position
  std::unordered_map<const ir::Value *, int> last_use_;
  std::unordered_map<const ir::Value *, std::vector<const ir::Operation *>>
      users_;
};

} // namespace blocc::cpu
