// Axis-info analysis: for every integer or pointer value, per dimension, how
// its elements are laid out: runs of consecutive values (contiguity), the
// power of two that divides them (divisibility) and runs of equal values
// (constancy). Backends use it to choose vector widths and to tell a
// contiguous masked access (one vector load/store) from a gather.
//
// The facts, for a value of shape S and each dimension d (a scalar is
// described as one dimension of size 1):
//  - contiguity[d] = c: along d, the elements split into runs of c starting
//    at indices that are multiples of c, and inside a run each element is
//    the previous one plus 1 (for pointers: plus one element);
//  - divisibility[d] = v: the first element of every such run is a multiple
//    of v (for pointers: the address, in bytes). With c = 1 every element is;
//  - constancy[d] = k: along d, the elements split into runs of k starting
//    at multiples of k, and inside a run all elements are equal.
// Every fact is a power of two; contiguity and constancy are at most the
// dimension's size; divisibility saturates at kMaxDivisibility (what 0 has).
// The facts hold for every index of the other dimensions.
//
// Seeds: function arguments (ArgumentInfo::divisibility), constants, arange
// (contiguous over its length, divisible like its start), program_id and
// num_programs (nothing known), and the hints multiple_of / max_contiguous /
// max_constancy, which the user vouches for. Loads, atomics, reductions,
// scans and dots give unknown values (constancy excepted for loads: equal
// addresses under an equal mask load equal values).
//
// Like Triton's, the rules for div, rem and cmp of a contiguous run by a
// constant assume the run's values are non-negative (index arithmetic);
// signed truncating division of negative values could break a run there.
// Wrap-around of integer arithmetic is likewise ignored.
#pragma once

#include "ir/function.h"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace blocc::ir {

struct AxisInfo {
  /// The divisibility of 0: every power of two the analysis tracks.
  static constexpr int64_t kMaxDivisibility = int64_t{1} << 62;

  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;
  /// The value of every element, when known (integers only; normalized to
  /// the element type as ConstantElement holds them).
  std::optional<int64_t> constant_value;

  int rank() const { return static_cast<int>(contiguity.size()); }

  /// Nothing known: runs of length 1, divisible by 1.
  static AxisInfo unknown(const Type &type);

  /// "contiguity=[128] divisibility=[16] constancy=[1]", then
  /// " constant=V" when the value is known.
  std::string str() const;

  friend bool operator==(const AxisInfo &, const AxisInfo &) = default;
};

class AxisInfoAnalysis {
public:
  /// Analyzes every value of `f` (which must verify).
  explicit AxisInfoAnalysis(const Function &f);

  /// The facts about `v`, a value of the analyzed function.
  const AxisInfo &get(const Value *v) const;

private:
  std::unordered_map<const Value *, AxisInfo> infos_;
};

/// Whether the analysis proves `mask` true in every lane (every element
/// known and nonzero): such a mask needs no masking.
bool provably_all_true(const AxisInfoAnalysis &axis_info, const Value *mask);

/// Every value of `f` with its facts, one per line in the order the IR
/// printer defines them, named as the printer names them:
///   %x: contiguity=[1] divisibility=[16] constancy=[1]
///   %5: contiguity=[128] divisibility=[16] constancy=[1]  // add
/// (multi-result ops as %k#i). For golden tests and blocc-opt's
/// --print-axis-info.
std::string print_axis_info(const Function &f);

} // namespace blocc::ir
