// The value of one IR Value during interpretation: its type and one
// canonical 64-bit element (see element.h) per lane, in row-major order.
// Pointer values also remember, per lane, which kernel argument's buffer
// the address was derived from (its provenance), so that memory accesses
// can be checked against the right bounds.
#pragma once

#include "ir/type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::interp {

/// Provenance of a pointer that derives from no argument buffer.
constexpr int32_t kNoProvenance = -1;

struct RuntimeValue {
  ir::Type type;
  std::vector<uint64_t> bits;
  std::vector<int32_t> provenance; // pointers only; parallel to bits

  RuntimeValue() = default;
  /// A value of `type` with every lane 0 (and no provenance).
  explicit RuntimeValue(ir::Type t);

  int64_t size() const { return static_cast<int64_t>(bits.size()); }
  ir::Scalar element() const { return type.element(); }
  bool is_pointer() const { return type.is_pointer(); }

  /// Lane i, or lane 0 for a rank-0 value (so that scalars act as splats
  /// wherever an elementwise op mixes them with blocks).
  uint64_t at(int64_t i) const { return bits[type.rank() == 0 ? 0 : i]; }
  int32_t provenance_at(int64_t i) const {
    return provenance.empty() ? kNoProvenance
                              : provenance[type.rank() == 0 ? 0 : i];
  }
};

/// The multi-index of flat row-major position `flat` in `shape`.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape);
/// The flat row-major position of `index` in `shape`.
int64_t flatten(const std::vector<int64_t> &index,
                const std::vector<int64_t> &shape);
/// "(1, 2)" for a multi-index, "()" for a scalar's.
std::string index_str(const std::vector<int64_t> &index);

} // namespace blocc::interp
