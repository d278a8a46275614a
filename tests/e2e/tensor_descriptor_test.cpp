// Tensor descriptors end to end: a tiled matmul C = A @ B whose tiles are
// read and written through bl::make_tensor_descriptor (A [M, K] and B [K, N]
// row major, C [M, N]), at sizes that are not multiples of the tiles (the
// descriptor's zero fill pads the partial tiles, its clipping drops the
// stores past the edges), against a float64 host reference; and a shifted
// 2-D copy whose tiles read across every edge of the source. Run by the
// interpreter and by the CPU backend with every access checked.
//
// Tolerance as in dot_test.cpp: K + 2 roundings of the accumulator's unit
// roundoff u, relative to sum_k |a_ik * b_kj|; f16 products are exact in
// float32, and float32 inputs are multiplied in IEEE float32.
#include "e2e/support.h"

namespace bl = blocc;
using namespace blocc::testing;

namespace {

// C[M, N] = A[M, K] @ B[K, N], one BM x BN tile per program, K in steps of
// BK with the accumulator carried.
template <typename In> auto &matmul_kernel() {
  static auto k = bl::kernel(
      "descriptor_matmul",
      [](bl::Ptr<In> a, bl::Ptr<In> b, bl::Ptr<float> c, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        auto pid_m = bl::program_id(0), pid_n = bl::program_id(1);
        auto a_desc = bl::make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
        auto b_desc = bl::make_tensor_descriptor(b, {K, N}, {N, 1}, {BK, BN});
        auto c_desc = bl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
        bl::Tensor acc = bl::zeros({BM, BN}, bl::float32);
        for (auto kk : bl::range(0, K, BK))
          acc = bl::dot(bl::load(a_desc, {pid_m * BM, kk}),
                        bl::load(b_desc, {kk, pid_n * BN}), acc,
                        bl::InputPrecision::IEEE);
        bl::store(c_desc, {pid_m * BM, pid_n * BN}, acc);
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

template <typename In> std::vector<In> random_matrix(size_t n) {
  std::vector<In> out;
  for (float x : random_floats(n))
    out.push_back(In(x)); // rounded to In: the reference reads it back
  return out;
}

template <typename In> void check_matmul(const Case &s) {
  SCOPED_TRACE(::testing::PrintToString(s));
  auto a = random_matrix<In>(size_t(s.m) * s.k);
  auto b = random_matrix<In>(size_t(s.k) * s.n);
  auto c = poisoned(size_t(s.m) * s.n);
  matmul_kernel<In>()[{bl::cdiv(s.m, s.bm), bl::cdiv(s.n, s.bn)}](
      a, b, c, s.m, s.n, s.k, s.bm, s.bn, s.bk);
  const double u = std::ldexp(1.0, -24); // float32 accumulation
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < s.n; ++j) {
      double want = 0, scale = 0;
      for (int q = 0; q < s.k; ++q) {
        double p = static_cast<double>(static_cast<float>(a[i * s.k + q])) *
                   static_cast<double>(static_cast<float>(b[q * s.n + j]));
        want += p;
        scale += std::abs(p);
      }
      double got = c[i * s.n + j];
      ASSERT_LE(std::abs(got - want), (s.k + 2) * u * scale + 1e-30)
          << "C[" << i << ", " << j << "]: got " << got << ", want " << want;
    }
}

class DescriptorMatmul : public ::testing::TestWithParam<Case> {};

TEST_P(DescriptorMatmul, Float16) { check_matmul<bl::half>(GetParam()); }
TEST_P(DescriptorMatmul, Float32) { check_matmul<float>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(OddSizes, DescriptorMatmul,
                         ::testing::Values(Case{37, 45, 53, 32, 32, 16},
                                           Case{16, 16, 16, 16, 16, 16},
                                           Case{70, 19, 100, 32, 16, 32},
                                           Case{1, 50, 17, 16, 32, 16}));

// out[i, j] = in[i - dr, j - dc] + 1 (1 where the source is outside in),
// over an m x n output with leading dimension ldo; in is m x n with
// leading dimension ldi.
auto &shifted_copy_kernel() {
  static auto k = bl::kernel(
      "descriptor_shifted_copy",
      [](bl::Ptr<float> in, bl::Ptr<float> out, bl::i32 m, bl::i32 n,
         bl::i32 ldi, bl::i32 ldo, bl::i32 dr, bl::i32 dc) {
        auto from = bl::make_tensor_descriptor(in, {m, n}, {ldi, 1}, {16, 32});
        auto to = bl::make_tensor_descriptor(out, {m, n}, {ldo, 1}, {16, 32});
        auto row = bl::program_id(0) * 16, col = bl::program_id(1) * 32;
        bl::store(to, {row, col}, bl::load(from, {row - dr, col - dc}) + 1.0f);
      });
  return k;
}

TEST(DescriptorShiftedCopy, TilesReadAcrossEveryEdge) {
  for (auto [m, n, dr, dc] :
       {std::tuple{45, 71, 0, 0}, std::tuple{45, 71, 7, -33},
        std::tuple{3, 5, -2, 4}, std::tuple{33, 64, 40, 0}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " by (" +
                 std::to_string(dr) + ", " + std::to_string(dc) + ")");
    int ldi = n + 2, ldo = n + 7;
    // Sized exactly: past the last row's n elements lies nothing.
    auto in = random_floats(size_t(m - 1) * ldi + n);
    auto out = poisoned(size_t(m - 1) * ldo + n);
    shifted_copy_kernel()[{bl::cdiv(m, 16), bl::cdiv(n, 32)}](in, out, m, n,
                                                              ldi, ldo, dr, dc);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < ldo && size_t(i) * ldo + j < out.size(); ++j) {
        float got = out[size_t(i) * ldo + j];
        if (j >= n) { // between rows: never written
          ASSERT_TRUE(std::isnan(got)) << "(" << i << ", " << j << ")";
          continue;
        }
        int si = i - dr, sj = j - dc;
        bool inside = si >= 0 && si < m && sj >= 0 && sj < n;
        ASSERT_EQ(got, (inside ? in[size_t(si) * ldi + sj] : 0.0f) + 1.0f)
            << "(" << i << ", " << j << ")";
      }
  }
}

} // namespace
