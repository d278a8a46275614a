#include "blocc/tensor.h"

#include "blocc/ops.h"
#include "blocc/trace.h"

namespace blocc {

using detail::TraceContext;

Tensor::Tensor() {
  if (auto *ctx = TraceContext::current_or_null())
    ctx->register_variable(*this);
}

Tensor::Tensor(ir::Value *value) : Tensor() { value_ = value; }

Tensor::Tensor(const Tensor &other) : Tensor() {
  value_ = other.value_;
  poison_ = other.poison_;
}

Tensor::Tensor(Tensor &&other) noexcept : Tensor() {
  value_ = other.value_;
  poison_ = other.poison_;
}

Tensor &Tensor::operator=(const Tensor &other) {
  value_ = other.value_;
  poison_ = other.poison_;
  return *this;
}

Tensor &Tensor::operator=(Tensor &&other) noexcept {
  value_ = other.value_;
  poison_ = other.poison_;
  return *this;
}

Tensor::~Tensor() {
  if (context_)
    context_->unregister_variable(*this);
}

void Tensor::bind(ir::Value *v) {
  value_ = v;
  poison_.clear();
}

ir::Value *Tensor::value(std::source_location loc) const {
  if (value_)
    return value_;
  if (!poison_.empty())
    detail::user_error(loc, poison_);
  detail::user_error(loc, "this Tensor variable has no value yet; assign "
                          "one before reading it");
}

ir::Type Tensor::type() const {
  if (!value_)
    throw Error("internal: type() of an unbound Tensor");
  return value_->type();
}

Tensor Tensor::to(DType dtype, std::source_location loc) const {
  return cast(Operand(*this, loc), dtype);
}

Tensor &Tensor::operator+=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) + rhs;
}
Tensor &Tensor::operator-=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) - rhs;
}
Tensor &Tensor::operator*=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) * rhs;
}
Tensor &Tensor::operator/=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) / rhs;
}
Tensor &Tensor::operator%=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) % rhs;
}
Tensor &Tensor::operator&=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) & rhs;
}
Tensor &Tensor::operator|=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) | rhs;
}
Tensor &Tensor::operator^=(const Operand &rhs) {
  return *this = Operand(*this, rhs.loc()) ^ rhs;
}

Operand::Operand(const Tensor &t, std::source_location loc)
    : kind_(Kind::Value), value_(t.value(loc)), loc_(loc) {
  // A value defined in a loop body or branch that has been closed is out of
  // scope; using it would break SSA dominance deep inside the compiler.
  auto *ctx = detail::TraceContext::current_or_null();
  ir::Block *home = value_->owner_block();
  if (ctx && home && ctx->builder().block() &&
      !ctx->builder().block()->is_nested_in(home))
    detail::user_error(loc, "this value was computed inside a bl::range loop "
                            "or bl::if_ branch that has ended; to use it "
                            "afterwards, declare the variable before the loop "
                            "or branch and assign it inside");
}

std::string Operand::describe() const {
  switch (kind_) {
  case Kind::Value:
    return value_->type().str();
  case Kind::Int:
    return is_bool_ ? std::string("bool constant")
                    : "integer constant " + std::to_string(int_);
  case Kind::Float:
    return "float constant " + std::to_string(float_);
  }
  return "";
}

} // namespace blocc
