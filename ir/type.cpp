#include "ir/type.h"

#include "ir/error.h"

#include <charconv>

namespace blocc::ir {

namespace {

struct ScalarInfo {
  Scalar scalar;
  std::string_view name;
  int bits;
};

constexpr ScalarInfo kScalars[] = {
    {Scalar::I1, "i1", 1},         {Scalar::I8, "i8", 8},
    {Scalar::I16, "i16", 16},      {Scalar::I32, "i32", 32},
    {Scalar::I64, "i64", 64},      {Scalar::U8, "u8", 8},
    {Scalar::U16, "u16", 16},      {Scalar::U32, "u32", 32},
    {Scalar::U64, "u64", 64},      {Scalar::F16, "f16", 16},
    {Scalar::BF16, "bf16", 16},    {Scalar::F32, "f32", 32},
    {Scalar::F64, "f64", 64},      {Scalar::F8E4M3, "f8e4m3", 8},
    {Scalar::F8E5M2, "f8e5m2", 8}, {Scalar::Ptr, "ptr", 64},
};

const ScalarInfo &info(Scalar s) { return kScalars[static_cast<int>(s)]; }

} // namespace

std::string_view scalar_name(Scalar s) { return info(s).name; }
int scalar_bits(Scalar s) { return info(s).bits; }

std::optional<Scalar> scalar_from_name(std::string_view name) {
  for (const auto &i : kScalars)
    if (i.name == name && i.scalar != Scalar::Ptr)
      return i.scalar;
  return std::nullopt;
}

bool is_float(Scalar s) {
  return s == Scalar::F16 || s == Scalar::BF16 || s == Scalar::F32 ||
         s == Scalar::F64 || is_fp8(s);
}
bool is_fp8(Scalar s) { return s == Scalar::F8E4M3 || s == Scalar::F8E5M2; }
bool is_integer(Scalar s) { return s >= Scalar::I1 && s <= Scalar::U64; }
bool is_signed(Scalar s) { return s >= Scalar::I8 && s <= Scalar::I64; }
bool is_unsigned(Scalar s) {
  return s == Scalar::I1 || (s >= Scalar::U8 && s <= Scalar::U64);
}

Type::Type(Scalar element, Scalar pointee, int address_space,
           const std::vector<int64_t> &shape)
    : valid_(true), element_(element),
      pointee_(element == Scalar::Ptr ? pointee : Scalar::I8),
      address_space_(
          static_cast<uint8_t>(element == Scalar::Ptr ? address_space : 0)),
      rank_(static_cast<uint8_t>(shape.size())) {
  if (address_space < 0 || address_space > 255)
    throw Error("pointer address spaces are 0 to 255, got " +
                std::to_string(address_space));
  if (shape.size() > kMaxRank)
    throw Error("blocks have rank 1 to 3, got rank " +
                std::to_string(shape.size()));
  for (size_t i = 0; i < shape.size(); ++i)
    shape_[i] = shape[i];
}

Type Type::block(Type element, const std::vector<int64_t> &shape) {
  return Type(element.element_, element.pointee_, element.address_space_,
              shape);
}

Type Type::with_element(Type element) const { return block(element, shape()); }

int64_t Type::num_elements() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i)
    n *= shape_[i];
  return n;
}

std::string Type::str() const {
  if (!valid_)
    return "<invalid>";
  std::string element;
  if (element_ == Scalar::Ptr) {
    element = "ptr<" + std::string(scalar_name(pointee_));
    if (address_space_ != 1)
      element += ", " + std::to_string(address_space_);
    element += ">";
  } else {
    element = std::string(scalar_name(element_));
  }
  if (rank_ == 0)
    return element;
  std::string s = "tensor<";
  for (int i = 0; i < rank_; ++i)
    s += std::to_string(shape_[i]) + "x";
  return s + element + ">";
}

namespace {

// A tiny cursor over the type grammar:
//   type    := element | "tensor<" (dim "x")+ element ">"
//   element := scalar | "ptr<" scalar ("," int)? ">"
struct TypeCursor {
  std::string_view s;
  size_t i = 0;

  void skip_space() {
    while (i < s.size() && s[i] == ' ')
      ++i;
  }
  bool eat(std::string_view word) {
    skip_space();
    if (s.substr(i, word.size()) != word)
      return false;
    i += word.size();
    return true;
  }
  std::optional<int64_t> integer() {
    skip_space();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (ec != std::errc())
      return std::nullopt;
    i = end - s.data();
    return v;
  }
  std::optional<Scalar> scalar() {
    skip_space();
    size_t j = i;
    while (j < s.size() && std::isalnum(static_cast<unsigned char>(s[j])))
      ++j;
    auto sc = scalar_from_name(s.substr(i, j - i));
    if (sc)
      i = j;
    return sc;
  }
  std::optional<Type> element() {
    if (eat("ptr<")) {
      auto pointee = scalar();
      if (!pointee)
        return std::nullopt;
      int64_t space = 1;
      if (eat(",")) {
        auto v = integer();
        if (!v)
          return std::nullopt;
        space = *v;
      }
      if (!eat(">"))
        return std::nullopt;
      return Type::pointer(*pointee, static_cast<int>(space));
    }
    auto sc = scalar();
    if (!sc)
      return std::nullopt;
    return Type::scalar(*sc);
  }
  std::optional<Type> type() {
    if (!eat("tensor<"))
      return element();
    std::vector<int64_t> shape;
    while (true) {
      skip_space();
      if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        auto d = integer();
        if (!d || !eat("x"))
          return std::nullopt;
        shape.push_back(*d);
        continue;
      }
      break;
    }
    auto e = element();
    if (!e || !eat(">") || shape.empty() || shape.size() > kMaxRank)
      return std::nullopt;
    return Type::block(*e, shape);
  }
};

} // namespace

std::optional<Type> parse_type(std::string_view text) {
  TypeCursor c{text};
  auto t = c.type();
  c.skip_space();
  if (!t || c.i != text.size())
    return std::nullopt;
  return t;
}

} // namespace blocc::ir
