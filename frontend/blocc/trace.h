// The state of one trace: the function being built, the insertion point,
// and every live Tensor variable (so that bl::range and bl::if_ can find the
// variables a body rebinds). One trace runs per thread at a time.
#pragma once

#include "blocc/tensor.h"
#include "ir/builder.h"
#include "ir/error.h"

#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <string>

namespace blocc::detail {

/// "kernel.cpp:12" for a source location (the file's base name).
std::string where(const std::source_location &loc);
ir::Location to_ir_location(const std::source_location &loc);

/// Throws blocc::Error("file:line: error: message").
[[noreturn]] void user_error(const std::source_location &loc,
                             const std::string &message);

class TraceContext {
public:
  explicit TraceContext(ir::Function &function);
  ~TraceContext();
  TraceContext(const TraceContext &) = delete;
  TraceContext &operator=(const TraceContext &) = delete;

  /// The trace running on this thread; a clear error when a blocc op is
  /// used outside a kernel body.
  static TraceContext &current(const std::source_location &loc);
  static TraceContext *current_or_null();

  ir::Function &function() { return function_; }
  /// The builder, positioned and located for an op written at `loc`.
  ir::Builder &at(const std::source_location &loc);
  /// Where the user wrote what `loc` computes: `loc` itself, but for a
  /// line of blocc's own sources (a library helper such as bl::cdiv that
  /// builds on other ops), the user's line the trace reached last, so
  /// that every op and error names the line in the kernel.
  std::source_location user_facing(const std::source_location &loc);
  ir::Builder &builder() { return builder_; }

  /// A snapshot of every live variable's binding, in creation order.
  struct Binding {
    uint64_t id;
    ir::Value *value;
  };
  std::vector<Binding> bindings() const;
  /// The live variable with this id, or nullptr once it was destroyed.
  Tensor *variable(uint64_t id) const;
  void rebind(Tensor &t, ir::Value *v) { t.bind(v); }
  void poison(Tensor &t, std::string why);

  /// Records a misuse that could not be thrown where it happened (in a
  /// destructor); the kernel tracer reports it when the body returns.
  void defer_error(std::string message);
  const std::string &deferred_error() const { return deferred_error_; }

  /// A bl::range body being traced gives every live variable a tentative
  /// loop argument (control.cpp), folded back to the value before the loop
  /// where the body leaves the variable unchanged. What a value read in
  /// the body stands for when it is such an argument: its value before the
  /// open loops, as long as the body leaves it unchanged (the value
  /// itself for anything else).
  ir::Value *value_before_loops(ir::Value *v) const;
  /// Asks that `v`, read in a loop body, stay unchanged by the loops whose
  /// tentative argument it is: where one carries it instead, the trace
  /// fails with `message` when the body returns.
  void require_loop_invariant(ir::Value *v, std::string message);
  /// For the loop tracer: `argument` stands for `outer` until the body
  /// ends; then end_tentative() says whether the body kept it (folded) or
  /// carries a new value, and checks what require_loop_invariant asked.
  void begin_tentative(ir::Value *argument, ir::Value *outer);
  void end_tentative(ir::Value *argument, bool folded);

private:
  friend class blocc::Tensor;
  void register_variable(Tensor &t);
  void unregister_variable(Tensor &t);

  ir::Function &function_;
  ir::Builder builder_;
  std::map<uint64_t, Tensor *> variables_;
  uint64_t next_id_ = 1;
  TraceContext *previous_;
  std::optional<std::source_location> user_location_;
  std::string deferred_error_;
  std::map<ir::Value *, ir::Value *> tentative_outer_;
  std::map<ir::Value *, std::vector<std::string>> invariance_required_;
};

} // namespace blocc::detail
