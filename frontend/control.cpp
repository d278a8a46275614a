// bl::range and bl::if_: structured control flow with carried variables.
#include "blocc/control.h"

#include "semantics.h"

#include <exception>

namespace blocc {

using detail::TraceContext;
using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace detail {

namespace {

bool defined_inside(ir::Value *v, ir::Block *region) {
  ir::Block *b = v->owner_block();
  return b && b->is_nested_in(region);
}

ir::Value *current_binding(Tensor *var) {
  return var && var->bound() ? var->value() : nullptr;
}

} // namespace

class LoopTrace {
public:
  LoopTrace(const Operand &lb, const Operand &ub, const Operand &step,
            LoopOptions options = {})
      : ctx_(TraceContext::current(lb.loc())), loc_(lb.loc()),
        uncaught_(std::uncaught_exceptions()) {
    for (const Operand *bound : {&lb, &ub, &step}) {
      Scalar s = natural_dtype(*bound);
      if ((bound->is_value() && bound->value()->type().is_block()) ||
          !ir::is_integer(s) || s == Scalar::I1)
        user_error(bound->loc(),
                   "bl::range bounds must be integer scalars, got " +
                       bound->describe());
    }
    Scalar dtype = promote(computation_dtype(lb, ub), natural_dtype(step));
    if (step.kind() == Operand::Kind::Int && step.int_value() <= 0)
      user_error(step.loc(), "bl::range: the step must be positive, got " +
                                 std::to_string(step.int_value()));
    std::vector<ir::Value *> bounds{as_dtype(lb, dtype), as_dtype(ub, dtype),
                                    as_dtype(step, dtype)};
    ir::Builder &b = ctx_.at(loc_);
    saved_block_ = b.block();
    saved_point_ = b.point();
    op_ = b.create(OpCode::For, bounds, {});
    if (options.warp_specialize)
      op_->set_attr(ir::kWarpSpecialize, int64_t{1});
    body_ = op_->add_region();
    induction_ = body_->add_argument(Type::scalar(dtype));
    // Every live variable gets a tentative loop argument; finish() keeps the
    // ones the body rebinds and folds the rest back to their outer value.
    for (const auto &binding : ctx_.bindings()) {
      Record r{binding.id, binding.value, nullptr};
      if (binding.value) {
        r.argument = body_->add_argument(binding.value->type());
        ctx_.rebind(*ctx_.variable(binding.id), r.argument);
        ctx_.begin_tentative(r.argument, binding.value);
      }
      records_.push_back(r);
    }
    b.set_insertion_point_to_end(body_);
  }

  Tensor induction_variable() const { return Tensor(induction_); }

  bool open() const { return op_ != nullptr; }

  /// Called when a body was left without finishing (break, return, or an
  /// exception). Only an exception is expected; the others are misuse.
  void abandon() {
    if (std::uncaught_exceptions() == uncaught_)
      ctx_.defer_error(where(loc_) +
                       ": error: `break` or `return` inside a bl::range loop "
                       "body is not supported; compute a mask instead, or "
                       "use a plain C++ loop for a trip count known at trace "
                       "time");
  }

  void finish() {
    std::map<ir::Value *, ir::Value *> fold;
    std::vector<ir::Value *> inits, yields;
    std::vector<Tensor *> carried;
    for (const Record &r : records_) {
      Tensor *var = ctx_.variable(r.id);
      ir::Value *now = current_binding(var);
      if (!r.outer) {
        if (now && defined_inside(now, body_))
          ctx_.poison(*var, "this variable was assigned inside the bl::range "
                            "loop at " +
                                where(loc_) +
                                " but had no value before it; assign it before "
                                "the loop to carry it across iterations");
        continue;
      }
      if (!var || !now || now == r.argument) {
        fold[r.argument] = r.outer;
        if (var && now == r.argument)
          ctx_.rebind(*var, r.outer);
        continue;
      }
      if (now->type() != r.outer->type()) {
        // In a long body the loop line alone does not say which assignment
        // changed the type; the new value's op knows where it was written.
        std::string assigned;
        if (ir::Operation *op = now->defining_op(); op && op->loc().known())
          assigned = " (assigned at " + op->loc().str() + ")";
        user_error(loc_, "a variable carried by this bl::range loop changes "
                         "type from " +
                             r.outer->type().str() + " to " +
                             now->type().str() + " in the loop body" +
                             assigned +
                             "; convert the new value (x.to(...) or "
                             "bl::broadcast_to) so that both match");
      }
      inits.push_back(r.outer);
      yields.push_back(now);
      carried.push_back(var);
    }
    // A body may rebind one variable to another's untouched argument
    // (a = b); that argument folds to b's outer value like every other use.
    for (ir::Value *&y : yields)
      if (auto it = fold.find(y); it != fold.end())
        y = it->second;
    ctx_.function().replace_all_uses(fold);
    // Variables created inside the body may still name a folded argument,
    // which is about to be destroyed.
    for (const auto &binding : ctx_.bindings())
      if (auto it = fold.find(binding.value); it != fold.end())
        ctx_.rebind(*ctx_.variable(binding.id), it->second);
    for (const Record &r : records_)
      if (r.argument)
        ctx_.end_tentative(r.argument, fold.count(r.argument) != 0);
    for (size_t i = body_->num_arguments(); i-- > 1;)
      if (fold.count(body_->argument(i)))
        body_->erase_argument(i);

    ir::Builder &b = ctx_.builder();
    b.set_insertion_point_to_end(body_);
    b.create(OpCode::Yield, yields, {});
    std::vector<ir::Value *> operands = op_->operands();
    operands.insert(operands.end(), inits.begin(), inits.end());
    op_->set_operands(operands);
    for (size_t i = 0; i < carried.size(); ++i)
      ctx_.rebind(*carried[i], op_->add_result(inits[i]->type()));
    b.restore(saved_block_, saved_point_);
    op_ = nullptr;
  }

private:
  struct Record {
    uint64_t id;
    ir::Value *outer;    // the binding before the loop (nullptr: unbound)
    ir::Value *argument; // its tentative loop argument
  };
  TraceContext &ctx_;
  SourceLoc loc_;
  int uncaught_;
  ir::Block *saved_block_ = nullptr;
  ir::Block::iterator saved_point_{};
  ir::Operation *op_ = nullptr;
  ir::Block *body_ = nullptr;
  ir::Value *induction_ = nullptr;
  std::vector<Record> records_;
};

} // namespace detail

Range::Range(Operand lb, Operand ub, Operand step, LoopOptions options)
    : lb_(lb), ub_(ub), step_(step), options_(options) {}

Range::~Range() {
  if (loop_ && loop_->open())
    loop_->abandon();
}

Range::iterator Range::begin() {
  if (loop_)
    user_error(lb_.loc(), "a bl::range can be iterated only once");
  loop_ = std::make_unique<detail::LoopTrace>(lb_, ub_, step_, options_);
  return iterator(this);
}

Tensor Range::iterator::operator*() const {
  return range_->loop_->induction_variable();
}

Range::iterator &Range::iterator::operator++() {
  range_->body_done_ = true;
  return *this;
}

bool Range::iterator::operator!=(const iterator &) const {
  if (!range_->body_done_)
    return true;
  if (range_->loop_->open())
    range_->loop_->finish();
  return false;
}

void for_range(Operand lb, Operand ub, Operand step,
               const std::function<void(Tensor)> &body) {
  detail::LoopTrace loop(lb, ub, step);
  body(loop.induction_variable());
  loop.finish();
}

void if_(Operand condition, const std::function<void()> &then_body,
         const std::function<void()> &else_body) {
  const SourceLoc &loc = condition.loc();
  if (condition.is_value() && condition.value()->type().is_block())
    user_error(loc,
               "bl::if_ needs a scalar condition, got " + condition.describe() +
                   "; for a block of conditions use bl::where(cond, a, b)");
  if (detail::natural_dtype(condition) != Scalar::I1)
    user_error(loc, "bl::if_ needs a boolean condition, got " +
                        condition.describe() + "; compare it, e.g. x != 0");
  TraceContext &ctx = TraceContext::current(loc);
  ir::Value *cond = detail::as_dtype(condition, Scalar::I1);
  ir::Builder &b = ctx.at(loc);
  ir::Block *saved_block = b.block();
  auto saved_point = b.point();
  ir::Operation *op = b.create(OpCode::If, {cond}, {});
  ir::Block *then_block = op->add_region();
  ir::Block *else_block = op->add_region();

  auto before = ctx.bindings();
  auto trace_branch = [&](ir::Block *block, const std::function<void()> &fn) {
    b.set_insertion_point_to_end(block);
    if (fn)
      fn();
    std::map<uint64_t, ir::Value *> after;
    for (const auto &binding : before) {
      Tensor *var = ctx.variable(binding.id);
      if (!var)
        continue;
      after[binding.id] = detail::current_binding(var);
      if (binding.value)
        ctx.rebind(*var, binding.value);
      else if (var->bound())
        ctx.poison(*var, "");
    }
    return after;
  };
  auto then_values = trace_branch(then_block, then_body);
  auto else_values = trace_branch(else_block, else_body);

  std::vector<ir::Value *> then_yields, else_yields;
  std::vector<Tensor *> carried;
  for (const auto &binding : before) {
    Tensor *var = ctx.variable(binding.id);
    if (!var)
      continue;
    ir::Value *t = then_values[binding.id], *e = else_values[binding.id];
    if (t == binding.value && e == binding.value)
      continue;
    if (!t || !e) {
      ctx.poison(*var, "this variable is assigned in only one branch of the "
                       "bl::if_ at " +
                           detail::where(loc) +
                           " and had no value before it; assign it before the "
                           "bl::if_ or in both branches");
      continue;
    }
    if (t->type() != e->type())
      user_error(loc, "a variable assigned in this bl::if_ has type " +
                          t->type().str() + " after the then-branch but " +
                          e->type().str() +
                          " after the else-branch; convert one so both match");
    then_yields.push_back(t);
    else_yields.push_back(e);
    carried.push_back(var);
  }
  b.set_insertion_point_to_end(then_block);
  b.create(OpCode::Yield, then_yields, {});
  b.set_insertion_point_to_end(else_block);
  b.create(OpCode::Yield, else_yields, {});
  for (size_t i = 0; i < carried.size(); ++i)
    ctx.rebind(*carried[i], op->add_result(then_yields[i]->type()));
  b.restore(saved_block, saved_point);
}

} // namespace blocc
