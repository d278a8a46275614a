// Kernels the Python tests load with blocc.load_library: every element
// type, scalars of each kind, a long-running kernel (the GIL test), an
// out-of-bounds read (checked mode), and a kernel whose trace fails.
#include <blocc/blocc.h>
#include <blocc/export.h>

#include <cstdint>

namespace bl = blocc;

namespace {

// out[i] = x[i] for i < n, for elements of type T.
template <typename T> auto copy_kernel(const char *name) {
  return bl::kernel(
      name, {"x", "out", "n", "BLOCK"},
      [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 n, bl::Const<int> BLOCK) {
        auto i = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        bl::store(out + i, bl::load(x + i, i < n), i < n);
      });
}

} // namespace

auto copy_bool = copy_kernel<bool>("copy_bool");
auto copy_i8 = copy_kernel<int8_t>("copy_i8");
auto copy_u8 = copy_kernel<uint8_t>("copy_u8");
auto copy_i16 = copy_kernel<int16_t>("copy_i16");
auto copy_u16 = copy_kernel<uint16_t>("copy_u16");
auto copy_i32 = copy_kernel<int32_t>("copy_i32");
auto copy_u32 = copy_kernel<uint32_t>("copy_u32");
auto copy_i64 = copy_kernel<int64_t>("copy_i64");
auto copy_u64 = copy_kernel<uint64_t>("copy_u64");
auto copy_f16 = copy_kernel<bl::half>("copy_f16");
auto copy_f32 = copy_kernel<float>("copy_f32");
auto copy_f64 = copy_kernel<double>("copy_f64");

// Stores each scalar argument, converted to f64, into out[0..5].
auto store_scalars = bl::kernel(
    "store_scalars", {"out", "a_i32", "b_f32", "c_i64", "d_f64", "K", "F"},
    [](bl::Ptr<double> out, bl::i32 a, bl::f32 b, bl::i64 c, bl::f64 d,
       bl::Const<int> K, bl::Const<float> F) {
      bl::store(out + 0, bl::cast(a, bl::float64));
      bl::store(out + 1, bl::cast(b, bl::float64));
      bl::store(out + 2, bl::cast(c, bl::float64));
      bl::store(out + 3, d);
      bl::store(out + 4, bl::cast(K, bl::float64));
      bl::store(out + 5, bl::cast(F, bl::float64));
    });

// Runs `iterations` rounds of arithmetic on one block; out[0..BLOCK) gets
// the result. One program: its time grows with `iterations` alone.
auto spin = bl::kernel(
    "spin", {"out", "iterations", "BLOCK"},
    [](bl::Ptr<float> out, bl::i32 iterations, bl::Const<int> BLOCK) {
      bl::Tensor acc = bl::cast(bl::arange(0, BLOCK), bl::float32);
      for ([[maybe_unused]] auto i : bl::range(0, iterations))
        acc = acc * 0.999f + 1.0f;
      bl::store(out + bl::arange(0, BLOCK), acc);
    });

// Reads x[i + 1] for i < n: one element past the end of an array of n.
auto read_past_end = bl::kernel(
    "read_past_end", {"x", "out", "n", "BLOCK"},
    [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n, bl::Const<int> BLOCK) {
      auto i = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      bl::store(out + i, bl::load(x + i + 1, i < n), i < n);
    });

// A mask of the wrong shape: tracing fails, naming this line.
auto bad_mask = bl::kernel(
    "bad_mask", {"x", "BLOCK"}, [](bl::Ptr<float> x, bl::Const<int> BLOCK) {
      auto i = bl::arange(0, BLOCK);
      bl::store(x + i, bl::load(x + i), bl::arange(0, 2 * BLOCK) < 4);
    });

BLOCC_EXPORT_KERNELS(copy_bool, copy_i8, copy_u8, copy_i16, copy_u16, copy_i32,
                     copy_u32, copy_i64, copy_u64, copy_f16, copy_f32, copy_f64,
                     store_scalars, spin, read_past_end, bad_mask)
