// bl::dot end to end: a tiled matmul C = A @ B (+ C0) whose K loop carries
// the accumulator through bl::range, at sizes that are not multiples of the
// tiles (block pointers with boundary checks zero the padding), for every
// input type, against a float64 (integers: exact) host reference.
//
// Tolerances bound the error of any summation order, relative to
// sum_k |a_ik * b_kj| (+ |c0_ij|): with unit roundoff u of the accumulator,
// K + 2 roundings (one per product-add, one for c0, one for the store) give
// at most (K + 2) * u. Inputs are exact in their type, so f16 and bf16
// products are exact in float32. float32 inputs under tf32 lose up to
// 2^-10 per product (both inputs rounded to 10 explicit mantissa bits),
// under tf32x3 about 2^-21 (the dropped lo*lo term); the reference
// interpreter computes them in IEEE float32, which every bound admits.
#include "e2e/support.h"
#include "fp8_bytes.h"

#include <gmock/gmock.h>

namespace bl = blocc;
using namespace blocc::testing;

namespace {

// Host element conversions: every test input is an exact value of its type.
template <typename T> T from_float(float x) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(x);
  else
    return T(x);
}
template <typename T> double to_double(T x) {
  if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>)
    return static_cast<double>(x);
  else
    return static_cast<float>(x);
}

template <typename T> std::vector<T> random_matrix(size_t n) {
  if constexpr (std::is_same_v<T, int8_t>)
    return random_ints<int8_t>(n, -128, 127);
  if constexpr (std::is_same_v<T, int32_t>) // accumulators beyond int8's range
    return random_ints<int32_t>(n, -1000000, 1000000);
  std::vector<T> out;
  for (float x : random_floats(n))
    out.push_back(from_float<T>(x));
  return out;
}

template <typename T> std::vector<T> poisoned_output(size_t n) {
  if constexpr (std::is_integral_v<T>)
    return std::vector<T>(n, static_cast<T>(0x5a5a5a5a));
  else
    return std::vector<T>(n, from_float<T>(std::nanf("")));
}

/// The reference product and its error scale, sum_k |a_ik b_kj| + |c0_ij|.
struct Reference {
  std::vector<double> value, scale;
};

template <typename In, typename Acc>
Reference reference(const std::vector<In> &a, const std::vector<In> &b,
                    const std::vector<Acc> *c0, int batch, int m, int n,
                    int k) {
  Reference r{std::vector<double>(size_t(batch) * m * n),
              std::vector<double>(size_t(batch) * m * n)};
  for (int p = 0; p < batch; ++p)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        size_t o = (size_t(p) * m + i) * n + j;
        double sum = c0 ? to_double((*c0)[o]) : 0, scale = std::abs(sum);
        for (int q = 0; q < k; ++q) {
          double prod = to_double(a[(size_t(p) * m + i) * k + q]) *
                        to_double(b[(size_t(p) * k + q) * n + j]);
          sum += prod;
          scale += std::abs(prod);
        }
        r.value[o] = sum;
        r.scale[o] = scale;
      }
  return r;
}

template <typename Out>
::testing::AssertionResult within(const std::vector<Out> &got,
                                  const Reference &want, double rel) {
  for (size_t i = 0; i < got.size(); ++i) {
    double g = to_double(got[i]), w = want.value[i];
    // The absolute floor covers a zero scale (an all-zero row or column).
    if (!(std::abs(g - w) <= rel * want.scale[i] + 1e-30))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << ", want " << w
             << " (allowed error " << rel * want.scale[i] << ")";
  }
  return ::testing::AssertionSuccess();
}

constexpr double kF64 = 0x1p-53, kF32 = 0x1p-24, kF16 = 0x1p-11;

double tolerance(bl::InputPrecision precision, bl::DType in, bl::DType acc,
                 int k) {
  if (acc == bl::int32)
    return 0;
  double u = acc == bl::float16 ? kF16 : acc == bl::float64 ? kF64 : kF32;
  double product = 0;
  if (in == bl::float32 && precision == bl::InputPrecision::TF32)
    product = 0x1p-10;
  if (in == bl::float32 && precision == bl::InputPrecision::TF32x3)
    product = 0x1p-20;
  return product + (k + 2) * u;
}

// C[M, N] = A[M, K] @ B[K, N] (+ C0 when HAS_C0), row-major, one BM x BN
// tile per program, K in steps of BK with the accumulator carried.
template <typename In, typename Out> auto &matmul_kernel() {
  static auto k = bl::kernel(
      "matmul",
      [](bl::Ptr<In> a, bl::Ptr<In> b, bl::Ptr<Out> c0, bl::Ptr<Out> c,
         bl::i32 M, bl::i32 N, bl::i32 K, bl::Const<int> BM, bl::Const<int> BN,
         bl::Const<int> BK, bl::Const<int> PRECISION, bl::Const<bool> HAS_C0) {
        auto pid_m = bl::program_id(0), pid_n = bl::program_id(1);
        auto a_tile = bl::make_block_ptr(a, {M, K}, {K, 1}, {pid_m * BM, 0},
                                         {BM, BK}, {1, 0});
        auto b_tile = bl::make_block_ptr(b, {K, N}, {N, 1}, {0, pid_n * BN},
                                         {BK, BN}, {1, 0});
        auto c_tile = bl::make_block_ptr(
            c, {M, N}, {N, 1}, {pid_m * BM, pid_n * BN}, {BM, BN}, {1, 0});
        bl::Tensor acc = bl::zeros({BM, BN}, bl::dtype_of<Out>());
        if (HAS_C0) {
          auto c0_tile = bl::make_block_ptr(
              c0, {M, N}, {N, 1}, {pid_m * BM, pid_n * BN}, {BM, BN}, {1, 0});
          acc = bl::load(c0_tile, {0, 1});
        }
        auto precision = static_cast<bl::InputPrecision>(int(PRECISION));
        for ([[maybe_unused]] auto kk : bl::range(0, K, BK)) {
          acc = bl::dot(bl::load(a_tile, {0, 1}), bl::load(b_tile, {0, 1}), acc,
                        precision);
          a_tile = bl::advance(a_tile, {0, BK});
          b_tile = bl::advance(b_tile, {BK, 0});
        }
        bl::store(c_tile, acc, {0, 1});
      });
  return k;
}

struct Case {
  int m, n, k;
  int bm, bn, bk;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.m << "x" << c.n << "x" << c.k << " tiles " << c.bm << "x" << c.bn
      << "x" << c.bk;
}

template <typename In, typename Out>
void check_matmul(const Case &s, bl::InputPrecision precision, bool with_c0) {
  auto a = random_matrix<In>(size_t(s.m) * s.k);
  auto b = random_matrix<In>(size_t(s.k) * s.n);
  std::vector<Out> c0 =
      with_c0 ? random_matrix<Out>(size_t(s.m) * s.n) : std::vector<Out>(1);
  auto c = poisoned_output<Out>(size_t(s.m) * s.n);
  matmul_kernel<In, Out>()[{bl::cdiv(s.m, s.bm), bl::cdiv(s.n, s.bn)}](
      a, b, c0, c, s.m, s.n, s.k, s.bm, s.bn, s.bk, int(precision), with_c0);
  Reference want = reference(a, b, with_c0 ? &c0 : nullptr, 1, s.m, s.n, s.k);
  double rel =
      tolerance(precision, bl::dtype_of<In>(), bl::dtype_of<Out>(), s.k);
  EXPECT_TRUE(within(c, want, rel));
}

class Matmul : public ::testing::TestWithParam<Case> {};

TEST_P(Matmul, Float32Ieee) {
  check_matmul<float, float>(GetParam(), bl::InputPrecision::IEEE, false);
}
TEST_P(Matmul, Float32Tf32) {
  check_matmul<float, float>(GetParam(), bl::InputPrecision::TF32, false);
}
TEST_P(Matmul, Float32Tf32x3WithAccumulator) {
  check_matmul<float, float>(GetParam(), bl::InputPrecision::TF32x3, true);
}
TEST_P(Matmul, Float16) {
  check_matmul<bl::half, float>(GetParam(), bl::InputPrecision::TF32, false);
}
TEST_P(Matmul, Float16WithAccumulator) {
  check_matmul<bl::half, float>(GetParam(), bl::InputPrecision::TF32, true);
}
TEST_P(Matmul, Float16AccumulatingInFloat16) {
  check_matmul<bl::half, bl::half>(GetParam(), bl::InputPrecision::TF32, true);
}
TEST_P(Matmul, BFloat16) {
  check_matmul<bl::bfloat16_t, float>(GetParam(), bl::InputPrecision::TF32,
                                      true);
}
TEST_P(Matmul, Float64) {
  check_matmul<double, double>(GetParam(), bl::InputPrecision::TF32, true);
}

// int8 tiles need K >= 32; the sums are exact in int32.
class MatmulInt8 : public ::testing::TestWithParam<Case> {};
TEST_P(MatmulInt8, ExactInInt32) {
  check_matmul<int8_t, int32_t>(GetParam(), bl::InputPrecision::TF32, false);
}
TEST_P(MatmulInt8, ExactInInt32WithAccumulator) {
  check_matmul<int8_t, int32_t>(GetParam(), bl::InputPrecision::TF32, true);
}

// One tile exactly, one tile padded on every side, primes, several tiles
// with a partial last K step, and a single element.
INSTANTIATE_TEST_SUITE_P(Shapes, Matmul,
                         ::testing::Values(Case{16, 16, 16, 16, 16, 16},
                                           Case{32, 64, 16, 32, 64, 16},
                                           Case{13, 7, 11, 16, 16, 16},
                                           Case{37, 45, 70, 16, 32, 32},
                                           Case{1, 1, 1, 16, 16, 16}));
INSTANTIATE_TEST_SUITE_P(Shapes, MatmulInt8,
                         ::testing::Values(Case{16, 16, 32, 16, 16, 32},
                                           Case{29, 17, 97, 16, 16, 32},
                                           Case{1, 1, 1, 16, 16, 32}));

// --------------------------------------------------------------- batched
// [B, M, K] @ [B, K, N] in one rank-3 dot.
auto batched = bl::kernel(
    "batched_dot", [](bl::Ptr<float> a, bl::Ptr<float> b, bl::Ptr<float> c,
                      bl::i32 M, bl::i32 N, bl::i32 K, bl::Const<int> B,
                      bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
      auto a_tile = bl::make_block_ptr(a, {B, M, K}, {M * K, K, 1}, {0, 0, 0},
                                       {B, BM, BK}, {2, 1, 0});
      auto b_tile = bl::make_block_ptr(b, {B, K, N}, {K * N, N, 1}, {0, 0, 0},
                                       {B, BK, BN}, {2, 1, 0});
      auto c_tile = bl::make_block_ptr(c, {B, M, N}, {M * N, N, 1}, {0, 0, 0},
                                       {B, BM, BN}, {2, 1, 0});
      auto product = bl::dot(bl::load(a_tile, {1, 2}), bl::load(b_tile, {1, 2}),
                             bl::InputPrecision::IEEE);
      bl::store(c_tile, product, {1, 2});
    });

TEST(BatchedDot, EachBatchIsItsOwnProduct) {
  const int batch = 2, m = 19, n = 16, k = 23;
  auto a = random_matrix<float>(batch * m * k);
  auto b = random_matrix<float>(batch * k * n);
  auto c = poisoned(batch * m * n);
  batched[{1}](a, b, c, m, n, k, batch, 32, 16, 32);
  Reference want = reference<float, float>(a, b, nullptr, batch, m, n, k);
  EXPECT_TRUE(within(c, want, (k + 2) * kF32));
}

// ----------------------------------------------------------------- the IR
// input_precision is recorded for float32 inputs only, where it matters;
// an absent accumulator becomes zeros of the result type.
TEST(DotIR, RecordsInputPrecisionForFloat32Only) {
  std::vector<float> a(16 * 16), b(16 * 16), c0(16 * 16), c(16 * 16);
  auto &f32 = matmul_kernel<float, float>();
  using ::testing::HasSubstr;
  using ::testing::Not;
  EXPECT_THAT(f32.ir_for(a, b, c0, c, 16, 16, 16, 16, 16, 16,
                         int(bl::InputPrecision::TF32x3), false),
              HasSubstr("input_precision = \"tf32x3\""));
  EXPECT_THAT(f32.ir_for(a, b, c0, c, 16, 16, 16, 16, 16, 16,
                         int(bl::InputPrecision::IEEE), false),
              HasSubstr("input_precision = \"ieee\""));
  std::vector<bl::half> ah(16 * 16), bh(16 * 16);
  auto &f16 = matmul_kernel<bl::half, float>();
  EXPECT_THAT(f16.ir_for(ah, bh, c0, c, 16, 16, 16, 16, 16, 16,
                         int(bl::InputPrecision::TF32), false),
              Not(HasSubstr("input_precision")));
}

// out_dtype picks the float16 accumulator without an explicit acc.
auto half_out = bl::kernel("half_out", [](bl::Ptr<bl::half> a,
                                          bl::Ptr<bl::half> b,
                                          bl::Ptr<bl::half> c) {
  auto rows =
      bl::make_block_ptr(a, {16, 32}, {32, 1}, {0, 0}, {16, 32}, {1, 0});
  auto cols =
      bl::make_block_ptr(b, {32, 16}, {16, 1}, {0, 0}, {32, 16}, {1, 0});
  auto out = bl::make_block_ptr(c, {16, 16}, {16, 1}, {0, 0}, {16, 16}, {1, 0});
  auto product = bl::dot(bl::load(rows), bl::load(cols),
                         bl::InputPrecision::TF32, bl::float16);
  bl::static_assert_(product.dtype() == bl::float16,
                     "out_dtype=float16 gives float16");
  bl::store(out, product);
});

TEST(DotOutDtype, Float16WithoutAccumulator) {
  auto a = random_matrix<bl::half>(16 * 32),
       b = random_matrix<bl::half>(32 * 16);
  auto c = poisoned_output<bl::half>(16 * 16);
  half_out[{1}](a, b, c);
  Reference want = reference<bl::half, bl::half>(a, b, nullptr, 1, 16, 16, 32);
  EXPECT_TRUE(within(c, want, (32 + 2) * kF16));
}

// ------------------------------------------------------------------ fp8
// fp8 has no host type: the bytes are loaded as uint8 and bitcast. The two
// formats may be mixed; products of a 4-bit and a 3-bit significand are
// exact in float32.
auto fp8_dot = bl::kernel("fp8_dot", [](bl::Ptr<uint8_t> a, bl::Ptr<uint8_t> b,
                                        bl::Ptr<float> c) {
  auto tile = [](bl::Ptr<uint8_t> base, int rows, int cols) {
    return bl::make_block_ptr(base, {rows, cols}, {cols, 1}, {0, 0},
                              {rows, cols}, {1, 0});
  };
  auto a8 = bl::bitcast(bl::load(tile(a, 16, 32)), bl::float8e4m3);
  auto b8 = bl::bitcast(bl::load(tile(b, 32, 16)), bl::float8e5m2);
  bl::store(bl::make_block_ptr(c, {16, 16}, {16, 1}, {0, 0}, {16, 16}, {1, 0}),
            bl::dot(a8, b8));
});

/// Random fp8 bytes that are numbers.
std::vector<uint8_t> random_fp8(size_t n, int exponent_bits) {
  std::vector<uint8_t> out;
  while (out.size() < n) {
    auto byte = static_cast<uint8_t>(random_ints<int>(1, 0, 255)[0]);
    if (blocc::fp8_bytes::is_number(byte, exponent_bits))
      out.push_back(byte);
  }
  return out;
}

TEST(Fp8Dot, MixedFormatsAccumulateInFloat32) {
  auto a = random_fp8(16 * 32, 4), b = random_fp8(32 * 16, 5);
  auto c = poisoned(16 * 16);
  fp8_dot[{1}](a, b, c);
  std::vector<double> ad, bd;
  for (uint8_t x : a)
    ad.push_back(blocc::fp8_bytes::decode(x, 4));
  for (uint8_t x : b)
    bd.push_back(blocc::fp8_bytes::decode(x, 5));
  Reference want = reference<double, double>(ad, bd, nullptr, 1, 16, 16, 32);
  EXPECT_TRUE(within(c, want, (32 + 2) * kF32));
}

// ------------------------------------------------ pointer arithmetic, trans
// The tutorial form: 2-D offsets from expand_dims, masked loads, and b
// stored as [N, K] (row n holds column n of the product's right factor), so
// the kernel multiplies by its transpose.
auto matmul_bt = bl::kernel(
    "matmul_bt", [](bl::Ptr<float> a, bl::Ptr<float> bt, bl::Ptr<float> c,
                    bl::i32 M, bl::i32 N, bl::i32 K, bl::Const<int> BM,
                    bl::Const<int> BN, bl::Const<int> BK) {
      auto rows = bl::program_id(0) * BM + bl::arange(0, BM);
      auto cols = bl::program_id(1) * BN + bl::arange(0, BN);
      auto ks = bl::arange(0, BK);
      auto r = bl::expand_dims(rows, 1), n = bl::expand_dims(cols, 1);
      bl::Tensor acc = bl::zeros({BM, BN}, bl::float32);
      for (auto k0 : bl::range(0, K, BK)) {
        auto k = bl::expand_dims(k0 + ks, 0);
        auto a_tile = bl::load(a + r * K + k, (r < M) && (k < K));
        auto bt_tile = bl::load(bt + n * K + k, (n < N) && (k < K));
        acc =
            bl::dot(a_tile, bl::trans(bt_tile), acc, bl::InputPrecision::IEEE);
      }
      auto cc = bl::expand_dims(cols, 0);
      bl::store(c + r * N + cc, acc, (r < M) && (cc < N));
    });

TEST(MatmulTransposed, PointerArithmeticAndTrans) {
  const int m = 21, n = 35, k = 50;
  auto a = random_matrix<float>(m * k), bt = random_matrix<float>(n * k);
  std::vector<float> b(k * n); // the [K, N] factor, for the reference
  for (int j = 0; j < n; ++j)
    for (int q = 0; q < k; ++q)
      b[q * n + j] = bt[j * k + q];
  auto c = poisoned(m * n);
  matmul_bt[{bl::cdiv(m, 16), bl::cdiv(n, 32)}](a, bt, c, m, n, k, 16, 32, 16);
  Reference want = reference<float, float>(a, b, nullptr, 1, m, n, k);
  EXPECT_TRUE(within(c, want, (k + 2) * kF32));
}

} // namespace
