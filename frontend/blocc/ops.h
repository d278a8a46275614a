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
/// What bl::exp2 gives where 2^x is below f32's smallest normal number
/// (x < -126): the subnormal (IEEE 754, the default), or +0. Flushing lets
/// the GPU take its exp2 instruction as it is, without a range fix-up per
/// element: for a softmax whose results are rounded to f16 or summed into
/// a total of at least 1 (attention), where values below 2^-126 matter to
/// nothing. f32 only.
enum class Subnormals { Keep, Flush };
Tensor exp2(Operand x, Subnormals results = Subnormals::Keep);
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
/// Transpose of a 2-D block; with `order`, the same as permute.
Tensor trans(Operand x);
Tensor trans(Operand x, const std::vector<int> &order);
/// Stacks a and b (broadcast to one shape, of one element type) along a new
/// last dimension of size 2; two scalars give a block of 2.
Tensor join(Operand a, Operand b);
/// Inverse of join: splits the last dimension (of size 2).
std::pair<Tensor, Tensor> split(Operand x);
/// Concatenates two blocks of one shape along dimension 0: a's rows, then
/// b's (deterministic, unlike Triton's cat, which may reorder).
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
// Each returns the values memory held before the update (masked-off lanes
// touch no memory). The value is broadcast to the pointer block and
// converted to the pointee type. Supported elements: 32- and 64-bit integers
// and floats (and/or/xor: integers only; float16/bfloat16: atomic_add
// only); atomic_cas: any 16-, 32- or 64-bit element, compared bit for bit.
enum class MemorySemantic { AcqRel, Acquire, Release, Relaxed };
enum class MemoryScope { Gpu /*gpu*/, Cta /*cta*/, System /*sys*/ };
struct AtomicOptions {
  MemorySemantic sem = MemorySemantic::AcqRel;
  MemoryScope scope = MemoryScope::Gpu;
};
Tensor atomic_add(Operand pointer, Operand value, AtomicOptions = {});
Tensor atomic_add(Operand pointer, Operand value, Operand mask,
                  AtomicOptions = {});
Tensor atomic_max(Operand pointer, Operand value, AtomicOptions = {});
Tensor atomic_max(Operand pointer, Operand value, Operand mask,
                  AtomicOptions = {});
Tensor atomic_min(Operand pointer, Operand value, AtomicOptions = {});
Tensor atomic_min(Operand pointer, Operand value, Operand mask,
                  AtomicOptions = {});
Tensor atomic_and(Operand pointer, Operand value, AtomicOptions = {});
Tensor atomic_and(Operand pointer, Operand value, Operand mask,
                  AtomicOptions = {});
Tensor atomic_or(Operand pointer, Operand value, AtomicOptions = {});
Tensor atomic_or(Operand pointer, Operand value, Operand mask,
                 AtomicOptions = {});
Tensor atomic_xor(Operand pointer, Operand value, AtomicOptions = {});
Tensor atomic_xor(Operand pointer, Operand value, Operand mask,
                  AtomicOptions = {});
Tensor atomic_xchg(Operand pointer, Operand value, AtomicOptions = {});
Tensor atomic_xchg(Operand pointer, Operand value, Operand mask,
                   AtomicOptions = {});
/// Where memory equals `compare`, writes `value`; returns the old values.
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
/// How float32 inputs are multiplied (ignored for other inputs): tf32
/// (Triton's default: inputs rounded to tf32, fastest), tf32x3 (three tf32
/// products, close to float32) or ieee (full float32).
enum class InputPrecision { IEEE, TF32, TF32x3 };
/// a (MxK) @ b (KxN) + acc (MxN), or batched: [B,M,K] @ [B,K,N] + [B,M,N].
/// M, N >= 16 and K >= 16 (32 for 8-bit inputs). Inputs: int8, float16,
/// bfloat16, float32, float64 or fp8 (the two may differ); the accumulator
/// and result are int32 for int8, float32 for float32/bfloat16, float64 for
/// float64, and float32 or float16 (`out_dtype`) for float16/fp8. Without
/// acc, it starts at zeros of `out_dtype` (default float32 / int32); with
/// acc, acc must have exactly the result's shape and type (which it
/// chooses when `out_dtype` is absent).
Tensor dot(Operand a, Operand b,
           InputPrecision precision = InputPrecision::TF32,
           std::optional<DType> out_dtype = {});
Tensor dot(Operand a, Operand b, Operand acc,
           InputPrecision precision = InputPrecision::TF32,
           std::optional<DType> out_dtype = {});

// ------------------------------------------------------------------ hints
// x itself, with facts the compiler may rely on (the caller vouches for
// them), per dimension: `values` has one entry per dimension, or one for
// all. multiple_of: elements (the first of each contiguous run) are
// multiples of the value; max_contiguous: runs of that many consecutive
// values; max_constancy: runs of that many equal values. The first two
// take integer or pointer blocks.
Tensor multiple_of(Operand x, const std::vector<int64_t> &values);
Tensor multiple_of(Operand x, int64_t value);
Tensor max_contiguous(Operand x, const std::vector<int64_t> &values);
Tensor max_contiguous(Operand x, int64_t value);
Tensor max_constancy(Operand x, const std::vector<int64_t> &values);
Tensor max_constancy(Operand x, int64_t value);

// ------------------------------------------------------------------ debug
/// Prints every element of each value when the kernel runs, one line each:
/// `pid (x, y, z) idx (i, j) <prefix> <value>` (`hex`: bit patterns).
void device_print(const std::string &prefix, const std::vector<Tensor> &values,
                  bool hex = false, BLOCC_HERE);
/// Fails the launch with a blocc::Error carrying `message` (and the kernel,
/// program id and line) when any lane of the boolean `condition` is false.
void device_assert(Operand condition, const std::string &message = "");
/// A trace-time check (tl.static_assert): fails the trace with `message`.
void static_assert_(bool condition, const std::string &message, BLOCC_HERE);

} // namespace blocc
