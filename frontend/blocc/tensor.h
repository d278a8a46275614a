// The handles a kernel body works with. A Tensor names one SSA value of the
// function being traced; assigning to a Tensor variable rebinds the name,
// which is how loop-carried values are discovered (see control.h).
#pragma once

#include "blocc/dtype.h"
#include "ir/function.h"

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

namespace blocc {

namespace detail {
class TraceContext;
}

class Tensor {
public:
  /// An unbound variable: reading it is an error until something is
  /// assigned to it.
  Tensor();
  explicit Tensor(ir::Value *value);
  Tensor(const Tensor &other);
  Tensor(Tensor &&other) noexcept;
  Tensor &operator=(const Tensor &other);
  Tensor &operator=(Tensor &&other) noexcept;
  ~Tensor();

  /// The bound value; throws blocc::Error (naming `loc`) when unbound.
  ir::Value *
  value(std::source_location loc = std::source_location::current()) const;
  bool bound() const { return value_ != nullptr; }

  ir::Type type() const;
  DType dtype() const { return type().element(); }
  std::vector<int64_t> shape() const { return type().shape(); }
  int rank() const { return type().rank(); }
  /// The number of elements (1 for a scalar).
  int64_t numel() const { return type().num_elements(); }

  /// x.to(bl::float16): the value converted to another element type.
  Tensor to(DType dtype,
            std::source_location loc = std::source_location::current()) const;

  // Compound assignment rebinds this variable (loop-carried when inside a
  // bl::range body and declared outside it).
  Tensor &operator+=(const class Operand &rhs);
  Tensor &operator-=(const class Operand &rhs);
  Tensor &operator*=(const class Operand &rhs);
  Tensor &operator/=(const class Operand &rhs);
  Tensor &operator%=(const class Operand &rhs);
  Tensor &operator&=(const class Operand &rhs);
  Tensor &operator|=(const class Operand &rhs);
  Tensor &operator^=(const class Operand &rhs);

  /// Why this variable may not be read, when a loop or branch left it so.
  const std::string &poison() const { return poison_; }

private:
  friend class detail::TraceContext;
  void bind(ir::Value *v);
  ir::Value *value_ = nullptr;
  std::string poison_;
  detail::TraceContext *context_ = nullptr;
  uint64_t id_ = 0;
};

/// A pointer kernel parameter: `bl::Ptr<float> x`. Pointer arithmetic
/// (x + offsets) gives a block of pointers, as in Triton.
template <typename T> class Ptr : public Tensor {
public:
  using element_type = T;
  using Tensor::Tensor;
  Ptr(const Tensor &t) : Tensor(t) {}
};

/// A runtime scalar kernel parameter: `bl::i32 n`.
template <typename T> class ScalarParam : public Tensor {
public:
  using value_type = T;
  using Tensor::Tensor;
  ScalarParam(const Tensor &t) : Tensor(t) {}
};

using i1 = ScalarParam<bool>;
using i8 = ScalarParam<int8_t>;
using i16 = ScalarParam<int16_t>;
using i32 = ScalarParam<int32_t>;
using i64 = ScalarParam<int64_t>;
using u8 = ScalarParam<uint8_t>;
using u16 = ScalarParam<uint16_t>;
using u32 = ScalarParam<uint32_t>;
using u64 = ScalarParam<uint64_t>;
using f16 = ScalarParam<half>;
using bf16 = ScalarParam<bfloat16_t>;
using f32 = ScalarParam<float>;
using f64 = ScalarParam<double>;

/// A compile-time constant kernel parameter (tl.constexpr): each distinct
/// value is its own specialization. Behaves as a plain T inside the kernel.
template <typename T> class Const {
public:
  using value_type = T;
  constexpr Const() = default;
  constexpr Const(T v) : value_(v) {}
  constexpr operator T() const { return value_; }
  constexpr T value() const { return value_; }

private:
  T value_{};
};

/// Anything that can stand as the operand of a block operation: a Tensor, a
/// C++ number (a "weak" constant that takes the other operand's type, as
/// Python numbers do in Triton), or a Const. Capturing the caller's source
/// location here is what lets operators report the user's line.
class Operand {
public:
  enum class Kind { Value, Int, Float };

  Operand(const Tensor &t,
          std::source_location loc = std::source_location::current());
  template <typename T>
  requires std::is_integral_v<T>
  Operand(T v, std::source_location loc = std::source_location::current())
      : kind_(std::is_same_v<T, bool> ? Kind::Int : Kind::Int),
        int_(static_cast<int64_t>(v)), is_bool_(std::is_same_v<T, bool>),
        loc_(loc) {}
  template <typename T>
  requires std::is_floating_point_v<T>
  Operand(T v, std::source_location loc = std::source_location::current())
      : kind_(Kind::Float), float_(static_cast<double>(v)), loc_(loc) {}
  template <typename T>
  Operand(const Const<T> &c,
          std::source_location loc = std::source_location::current())
      : Operand(c.value(), loc) {}

  Kind kind() const { return kind_; }
  bool is_value() const { return kind_ == Kind::Value; }
  ir::Value *value() const { return value_; }
  int64_t int_value() const { return int_; }
  double float_value() const { return float_; }
  bool is_bool() const { return is_bool_; }
  const std::source_location &loc() const { return loc_; }
  /// "tensor<128xf32>", or "int literal 3" for a weak constant.
  std::string describe() const;

private:
  Kind kind_ = Kind::Value;
  ir::Value *value_ = nullptr;
  int64_t int_ = 0;
  double float_ = 0;
  bool is_bool_ = false;
  std::source_location loc_;
};

} // namespace blocc
