// The language: every operation a kernel body can use, mirroring
// triton.language. Each takes its tensor arguments as Operand, which records
// the caller's source line for error messages; functions without a tensor
// argument take a trailing std::source_location for the same reason.
//
// Differences from Triton, on purpose:
//  - `/` and `%` on two integers are C++'s truncating division and
//    remainder (Triton's `/` gives float32; use bl::fdiv for that).
//  - C++ number literals are "weak" like Python's: `x * 2` keeps x's dtype,
//    `int_tensor * 1.5` gives float32.
#pragma once

#include "blocc/tensor.h"

#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace blocc {

using Shape = std::vector<int64_t>;
using SourceLoc = std::source_location;
#define BLOCC_HERE std::source_location loc = std::source_location::current()

// ---------------------------------------------------------------- creation
Tensor program_id(int axis, BLOCC_HERE);
Tensor num_programs(int axis, BLOCC_HERE);
/// [start, end) as int32; end - start must be a power of two.
Tensor arange(int64_t start, int64_t end, BLOCC_HERE);
/// A block of `shape` filled with `value` (a number or a scalar Tensor).
Tensor full(const Shape &shape, Operand value, DType dtype);
Tensor zeros(const Shape &shape, DType dtype, BLOCC_HERE);
Tensor zeros_like(Operand x);
Tensor full_like(Operand x, Operand value);
/// A scalar constant of the given type.
Tensor scalar(Operand value, DType dtype);

// --------------------------------------------------------- type conversion
/// Numeric conversion (float->int truncates toward zero).
Tensor cast(Operand x, DType dtype);
/// Reinterprets the bits as another type of the same width.
Tensor bitcast(Operand x, DType dtype);

// ------------------------------------------------------ arithmetic operators
Tensor operator+(Operand a, Operand b);
Tensor operator-(Operand a, Operand b);
Tensor operator*(Operand a, Operand b);
Tensor operator/(Operand a, Operand b);
Tensor operator%(Operand a, Operand b);
Tensor operator&(Operand a, Operand b);
Tensor operator|(Operand a, Operand b);
Tensor operator^(Operand a, Operand b);
Tensor operator<<(Operand a, Operand b);
Tensor operator>>(Operand a, Operand b);
Tensor operator<(Operand a, Operand b);
Tensor operator<=(Operand a, Operand b);
Tensor operator>(Operand a, Operand b);
Tensor operator>=(Operand a, Operand b);
Tensor operator==(Operand a, Operand b);
Tensor operator!=(Operand a, Operand b);
Tensor operator&&(Operand a, Operand b);
Tensor operator||(Operand a, Operand b);
Tensor operator-(Operand a);
Tensor operator~(Operand a);
Tensor operator!(Operand a);

/// True division: integers are converted to float32 first (Triton's `/`).
Tensor fdiv(Operand a, Operand b);
/// ceil(a / b) for integers.
Tensor cdiv(Operand a, Operand b);
/// Host-side ceil division, for grids.
template <typename A, typename B>
requires std::is_integral_v<A> && std::is_integral_v<B>
constexpr auto cdiv(A a, B b) { return (a + b - 1) / b; }
Tensor minimum(Operand a, Operand b);
Tensor maximum(Operand a, Operand b);
Tensor clamp(Operand x, Operand lo, Operand hi);
Tensor where(Operand condition, Operand a, Operand b);
Tensor umulhi(Operand a, Operand b);
Tensor fma(Operand a, Operand b, Operand c);

// ---------------------------------------------------------------- math
Tensor abs(Operand x);
Tensor exp(Operand x);
Tensor exp2(Operand x);
Tensor log(Operand x);
Tensor log2(Operand x);
Tensor sqrt(Operand x);
Tensor rsqrt(Operand x);
Tensor sin(Operand x);
Tensor cos(Operand x);
Tensor tanh(Operand x);
Tensor erf(Operand x);
Tensor floor(Operand x);
Tensor ceil(Operand x);
Tensor sigmoid(Operand x);

// ------------------------------------------------------------------ shape
/// Inserts a dimension of size 1 at `axis` (negative counts from the end).
Tensor expand_dims(Operand x, int axis);
Tensor broadcast_to(Operand x, const Shape &shape);
/// Same elements, row-major order, another shape.
Tensor reshape(Operand x, const Shape &shape);
/// Result dimension i is x's dimension order[i].
Tensor permute(Operand x, const std::vector<int> &order);
/// Transpose of a 2-D block (or permute with `order`).
Tensor trans(Operand x);
/// Stacks a and b along a new last dimension of size 2.
Tensor join(Operand a, Operand b);
/// Inverse of join: splits the last dimension (of size 2).
std::pair<Tensor, Tensor> split(Operand x);
/// Concatenates along dimension 0.
Tensor cat(Operand a, Operand b);
/// Reads a block of size 1 as a scalar... not part of the language: use
/// reductions. (Kept out on purpose.)

// ----------------------------------------------------------------- memory
enum class Cache {
  Default,
  CacheAll /*ca*/,
  CacheGlobal /*cg*/,
  Streaming /*cs*/
};
enum class Eviction { Default, EvictFirst, EvictLast };

struct LoadOptions {
  Cache cache = Cache::Default;
  Eviction eviction = Eviction::Default;
  bool is_volatile = false;
};
struct StoreOptions {
  Cache cache = Cache::Default;
  Eviction eviction = Eviction::Default;
};

/// Loads through a pointer or block of pointers. Masked-off lanes read
/// `other` (0 when absent) and touch no memory.
Tensor load(Operand pointer, LoadOptions options = {});
Tensor load(Operand pointer, Operand mask, LoadOptions options = {});
Tensor load(Operand pointer, Operand mask, Operand other,
            LoadOptions options = {});
/// Stores `value` (converted to the pointee type) through `pointer` where
/// `mask` is true.
void store(Operand pointer, Operand value, StoreOptions options = {});
void store(Operand pointer, Operand value, Operand mask,
           StoreOptions options = {});

// ---------------------------------------------------------------- atomics
enum class MemorySemantic { AcqRel, Acquire, Release, Relaxed };
enum class MemoryScope { Gpu, Cta, System };
struct AtomicOptions {
  MemorySemantic sem = MemorySemantic::AcqRel;
  MemoryScope scope = MemoryScope::Gpu;
};
Tensor atomic_add(Operand pointer, Operand value,
                  std::optional<Operand> mask = {}, AtomicOptions = {});
Tensor atomic_max(Operand pointer, Operand value,
                  std::optional<Operand> mask = {}, AtomicOptions = {});
Tensor atomic_min(Operand pointer, Operand value,
                  std::optional<Operand> mask = {}, AtomicOptions = {});
Tensor atomic_and(Operand pointer, Operand value,
                  std::optional<Operand> mask = {}, AtomicOptions = {});
Tensor atomic_or(Operand pointer, Operand value,
                 std::optional<Operand> mask = {}, AtomicOptions = {});
Tensor atomic_xor(Operand pointer, Operand value,
                  std::optional<Operand> mask = {}, AtomicOptions = {});
Tensor atomic_xchg(Operand pointer, Operand value,
                   std::optional<Operand> mask = {}, AtomicOptions = {});
Tensor atomic_cas(Operand pointer, Operand compare, Operand value,
                  AtomicOptions = {});

// ------------------------------------------------------------- reductions
/// A combine function for reduce/scan: takes two scalar Tensors (the
/// accumulated value and the next element) and returns their combination.
using Combine = std::function<Tensor(Tensor, Tensor)>;
/// Several-operand combine (e.g. value and index): takes (lhs..., rhs...)
/// and returns one Tensor per operand.
using CombineN = std::function<std::vector<Tensor>(
    const std::vector<Tensor> &, const std::vector<Tensor> &)>;

/// Reductions over `axis`; the axis disappears from the shape. With
/// axis = std::nullopt the whole block is reduced to a scalar.
using Axis = std::optional<int>;
Tensor sum(Operand x, Axis axis = std::nullopt);
Tensor max(Operand x, Axis axis = std::nullopt);
Tensor min(Operand x, Axis axis = std::nullopt);
Tensor prod(Operand x, Axis axis = std::nullopt);
Tensor xor_sum(Operand x, Axis axis = std::nullopt);
/// Index (int32) of the largest / smallest element; ties pick the smallest
/// index, as Triton does.
Tensor argmax(Operand x, int axis);
Tensor argmin(Operand x, int axis);
Tensor reduce(Operand x, Axis axis, const Combine &combine);
std::vector<Tensor> reduce(const std::vector<Tensor> &xs, int axis,
                           const CombineN &combine, BLOCC_HERE);

/// Inclusive scans along `axis`.
Tensor cumsum(Operand x, int axis = 0, bool reverse = false);
Tensor cumprod(Operand x, int axis = 0, bool reverse = false);
Tensor associative_scan(Operand x, int axis, const Combine &combine,
                        bool reverse = false);

// -------------------------------------------------------------------- dot
enum class InputPrecision { IEEE, TF32, TF32x3 };
/// a (MxK) @ b (KxN) + acc (MxN). Without acc, the accumulator is zeros of
/// float32 (integer inputs: int32), or of `out_dtype` when given.
Tensor dot(Operand a, Operand b, std::optional<Operand> acc = {},
           InputPrecision precision = InputPrecision::TF32,
           std::optional<DType> out_dtype = {});

// ------------------------------------------------------------------ hints
Tensor multiple_of(Operand x, const std::vector<int64_t> &values);
Tensor max_contiguous(Operand x, const std::vector<int64_t> &values);
Tensor max_constancy(Operand x, const std::vector<int64_t> &values);

// ------------------------------------------------------------------ debug
void device_print(const std::string &prefix, const std::vector<Tensor> &values,
                  bool hex = false, BLOCC_HERE);
void device_assert(Operand condition, const std::string &message);
/// A trace-time check (tl.static_assert): fails the trace with `message`.
void static_assert_(bool condition, const std::string &message, BLOCC_HERE);

} // namespace blocc
