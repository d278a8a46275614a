// Types of the block IR: scalars, pointers to scalars, and blocks (static
// shapes of rank 1 to 3, every dimension a power of two) of either.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blocc::ir {

enum class Scalar : uint8_t {
  I1,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  F16,
  BF16,
  F32,
  F64,
  F8E4M3, // storage only: converted with cast, no arithmetic
  F8E5M2, // storage only
  Ptr,    // the element is a pointer; see Type::pointee
};

std::string_view scalar_name(Scalar s);
std::optional<Scalar> scalar_from_name(std::string_view name);
int scalar_bits(Scalar s);
bool is_float(Scalar s); // f16, bf16, f32, f64 and the fp8 formats
bool is_fp8(Scalar s);
bool is_integer(Scalar s);  // i1 .. u64
bool is_signed(Scalar s);   // i8 .. i64 (i1 counts as unsigned)
bool is_unsigned(Scalar s); // i1, u8 .. u64

constexpr int kMaxRank = 3;

/// A value type. Rank 0 is a scalar; rank 1..3 is a block whose every
/// dimension is a power of two. The element is either a plain scalar or a
/// pointer to one (element == Scalar::Ptr, pointee says to what).
class Type {
public:
  Type() = default;
  static Type scalar(Scalar s) { return Type(s, Scalar::I8, 0, {}); }
  static Type pointer(Scalar pointee, int address_space = 1) {
    return Type(Scalar::Ptr, pointee, address_space, {});
  }
  /// A block of `element` (itself rank 0) with the given shape; shape {}
  /// gives the element back.
  static Type block(Type element, const std::vector<int64_t> &shape);

  Scalar element() const { return element_; }
  Scalar pointee() const { return pointee_; }
  int address_space() const { return address_space_; }
  int rank() const { return rank_; }
  int64_t dim(int i) const { return shape_[i]; }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(shape_.begin(), shape_.begin() + rank_);
  }
  int64_t num_elements() const;

  bool is_valid() const { return valid_; }
  bool is_block() const { return rank_ > 0; }
  bool is_pointer() const { return element_ == Scalar::Ptr; }
  bool is_float() const { return !is_pointer() && ir::is_float(element_); }
  bool is_integer() const { return !is_pointer() && ir::is_integer(element_); }
  bool is_bool() const { return element_ == Scalar::I1; }

  /// The type of one element (rank 0), pointer or scalar.
  Type element_type() const {
    return Type(element_, pointee_, address_space_, {});
  }
  /// Same shape, another element type (rank-0 `element`).
  Type with_element(Type element) const;
  Type with_shape(const std::vector<int64_t> &shape) const {
    return block(element_type(), shape);
  }

  /// i32, ptr<f32>, ptr<f16, 3>, tensor<128x64xf32>, tensor<64xptr<f32>>
  std::string str() const;

  friend bool operator==(const Type &a, const Type &b) {
    return a.valid_ == b.valid_ && a.element_ == b.element_ &&
           (a.element_ != Scalar::Ptr ||
            (a.pointee_ == b.pointee_ &&
             a.address_space_ == b.address_space_)) &&
           a.rank_ == b.rank_ && a.shape_ == b.shape_;
  }
  friend bool operator!=(const Type &a, const Type &b) { return !(a == b); }

private:
  Type(Scalar element, Scalar pointee, int address_space,
       const std::vector<int64_t> &shape);

  bool valid_ = false;
  Scalar element_ = Scalar::I32;
  Scalar pointee_ = Scalar::I8;
  uint8_t address_space_ = 0;
  uint8_t rank_ = 0;
  std::array<int64_t, kMaxRank> shape_{0, 0, 0};
};

inline bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// Parses the text `Type::str` prints; nullopt when it is not a type.
std::optional<Type> parse_type(std::string_view text);

} // namespace blocc::ir
