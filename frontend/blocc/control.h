// Structured control flow traced into the IR: bl::range loops and bl::if_
// branches. A Tensor variable declared outside the body and reassigned
// inside it is carried out of the loop or branch, the way Triton's Python
// frontend treats a reassigned Python variable:
//
//   auto acc = bl::zeros({BM, BN}, bl::float32);
//   for (auto k : bl::range(0, K, BK)) {   // traced once, runs K/BK times
//     acc += bl::dot(a, b);
//   }
//
// (Braun et al.'s on-the-fly SSA construction in miniature: every live
// variable gets a tentative loop argument on entry; those the body never
// rebinds are folded back to their outer value on exit.) A plain C++ `for`
// is unrolled at trace time instead (tl.static_range).
#pragma once

#include "blocc/ops.h"

#include <functional>

namespace blocc {

namespace detail {
/// One traced `for` under construction (see range()).
class LoopTrace;
} // namespace detail

/// How a bl::range loop is compiled, where a backend can honour it (the
/// others run the loop as written):
///   warp_specialize  on Hopper GPUs (sm_90a), a loop whose tiles the
///                    Tensor Memory Accelerator copies for warpgroup MMAs
///                    (tensor descriptors read by bl::dot) gets a producer
///                    warpgroup of its own that only issues the copies,
///                    stages ahead, while the kernel's warps only multiply
///                    (Triton's tl.range(..., warp_specialize=True)).
struct LoopOptions {
  bool warp_specialize = false;
};

/// for (auto i : bl::range(lb, ub, step)) { ... }: iterates i = lb, lb+step,
/// ... while i < ub. The body is traced once. `break` and `return` inside the
/// body are not supported (the trace reports them).
class Range {
public:
  Range(Operand lb, Operand ub, Operand step, LoopOptions options = {});
  Range(const Range &) = delete;
  Range &operator=(const Range &) = delete;
  ~Range();

  class iterator {
  public:
    explicit iterator(Range *r) : range_(r) {}
    Tensor operator*() const;
    iterator &operator++();
    bool operator!=(const iterator &other) const;

  private:
    Range *range_;
  };
  iterator begin();
  iterator end() { return iterator(nullptr); }

private:
  friend class iterator;
  Operand lb_, ub_, step_;
  LoopOptions options_;
  std::unique_ptr<detail::LoopTrace> loop_;
  bool body_done_ = false;
};

inline Range range(Operand ub) {
  return Range(Operand(0, ub.loc()), ub, Operand(1, ub.loc()));
}
inline Range range(Operand lb, Operand ub) {
  return Range(lb, ub, Operand(1, lb.loc()));
}
inline Range range(Operand lb, Operand ub, Operand step,
                   LoopOptions options = {}) {
  return Range(lb, ub, step, options);
}

/// The callable form: bl::for_range(lb, ub, step, [&](bl::Tensor i) { ... }).
void for_range(Operand lb, Operand ub, Operand step,
               const std::function<void(Tensor)> &body);

/// if (cond) { then_body } else { else_body }, with cond a scalar i1 known
/// only at run time. Variables either branch rebinds are carried out; both
/// branches must leave them with one type. For conditions known at trace
/// time, use a plain C++ `if`.
void if_(Operand condition, const std::function<void()> &then_body,
         const std::function<void()> &else_body = {});

} // namespace blocc
