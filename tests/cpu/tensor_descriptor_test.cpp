// Tensor descriptors on the CPU backend against the interpreter: 2-D and
// 3-D tiles of odd-sized arrays (int32, f16, int8 elements) read at random
// offsets, some partly or wholly outside the array, and stored at others,
// so that the zero fill and the clipped stores of both backends are
// compared bit for bit on fresh random inputs and poisoned outputs.
#include "cpu/support.h"

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

// Each program p moves the tile at (r[p], c[p]) of `in` to the tile at
// (r'[p], c'[p]) of `out`, plus one: both arrays m x n with leading
// dimension ld; `at` holds the four offsets of every program.
template <typename T> auto &move_tiles_kernel() {
  static auto k = bl::kernel(
      "descriptor_move_tiles",
      [](bl::Ptr<T> in, bl::Ptr<T> out, bl::Ptr<int32_t> at, bl::i32 m,
         bl::i32 n, bl::i32 ld, bl::Const<int> BM, bl::Const<int> BN) {
        auto from = bl::make_tensor_descriptor(in, {m, n}, {ld, 1}, {BM, BN});
        auto to = bl::make_tensor_descriptor(out, {m, n}, {ld, 1}, {BM, BN});
        auto p = at + 4 * bl::program_id(0);
        auto tile = bl::load(from, {bl::load(p), bl::load(p + 1)});
        bl::store(to, {bl::load(p + 2), bl::load(p + 3)}, tile + 1);
      });
  return k;
}

/// The four offsets of every program: a source tile anywhere from well
/// before the start to past the end (whole, partial or wholly outside),
/// and a target tile from a grid of disjoint slots covering the array
/// shifted by (dr, dc), so that no two programs store to one element (the
/// CPU backend runs programs in parallel). One slot in five targets a tile
/// wholly outside the array instead, which must write nothing.
std::vector<int32_t> tile_offsets(int m, int n, int bm, int bn) {
  int dr = random_values<int32_t>(1, 0, bm - 1)[0];
  int dc = random_values<int32_t>(1, 0, bn - 1)[0];
  std::vector<int32_t> at;
  for (int r = -1; r <= bl::cdiv(m, bm); ++r)
    for (int c = -1; c <= bl::cdiv(n, bn); ++c) {
      int32_t from_r = random_values<int32_t>(1, -bm - 2, m + 2)[0];
      int32_t from_c = random_values<int32_t>(1, -bn - 2, n + 2)[0];
      bool outside = random_values<int32_t>(1, 0, 4)[0] == 0;
      int32_t to_r = outside ? -2 * bm : r * bm + dr;
      at.insert(at.end(), {from_r, from_c, to_r, c * bn + dc});
    }
  return at;
}

template <typename T> void check_move_tiles(int bm, int bn) {
  BLOCC_SEED_TRACE();
  for (auto [m, n] : {std::pair{1, 1}, std::pair{13, 29}, std::pair{64, 64},
                      std::pair{70, 45}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
    int ld = n + 5;
    size_t size = size_t(m - 1) * ld + n; // exactly: nothing past the end
    auto in = random_values<T>(size, -50, 50);
    std::vector<int32_t> at = tile_offsets(m, n, bm, bn);
    int programs = static_cast<int>(at.size() / 4);
    auto cpu = poisoned<T>(size), interpreter = poisoned<T>(size);
    auto &k = move_tiles_kernel<T>();
    k[{programs}].with(kCpu)(in, cpu, at, m, n, ld, bm, bn);
    k[{programs}].with(kInterpreter)(in, interpreter, at, m, n, ld, bm, bn);
    EXPECT_TRUE(same(cpu, interpreter));
  }
}

TEST(CpuTensorDescriptor, Int32TilesMatchTheInterpreter) {
  check_move_tiles<int32_t>(16, 8);
}
TEST(CpuTensorDescriptor, Float16TilesMatchTheInterpreter) {
  check_move_tiles<bl::half>(8, 32);
}
TEST(CpuTensorDescriptor, Int8TilesMatchTheInterpreter) {
  check_move_tiles<int8_t>(4, 16);
}

// A 3-D [d0, d1, d2] array with padded strides, summed over its middle
// dimension tile by tile: out[i, k] = sum_j in[i, j, k].
auto sum_middle = bl::kernel(
    "descriptor_sum_middle",
    [](bl::Ptr<float> in, bl::Ptr<float> out, bl::i32 d0, bl::i32 d1,
       bl::i32 d2, bl::i32 s0, bl::i32 s1) {
      auto from =
          bl::make_tensor_descriptor(in, {d0, d1, d2}, {s0, s1, 1}, {2, 8, 16});
      auto to = bl::make_tensor_descriptor(out, {d0, d2}, {d2, 1}, {2, 16});
      auto i = bl::program_id(0) * 2, k = bl::program_id(1) * 16;
      bl::Tensor acc = bl::zeros({2, 16}, bl::float32);
      for (auto j : bl::range(0, d1, 8))
        acc += bl::sum(bl::load(from, {i, j, k}), 1);
      bl::store(to, {i, k}, acc);
    });

TEST(CpuTensorDescriptor, ThreeDimensionalTilesMatchTheInterpreter) {
  BLOCC_SEED_TRACE();
  const int d0 = 5, d1 = 19, d2 = 37, s1 = 40, s0 = 40 * 20;
  auto in =
      random_values<float>(size_t(d0 - 1) * s0 + (d1 - 1) * s1 + d2, -1, 1);
  auto cpu = poisoned<float>(d0 * d2), interpreter = poisoned<float>(d0 * d2);
  bl::Grid grid(bl::cdiv(d0, 2), bl::cdiv(d2, 16));
  sum_middle[grid].with(kCpu)(in, cpu, d0, d1, d2, s0, s1);
  sum_middle[grid].with(kInterpreter)(in, interpreter, d0, d1, d2, s0, s1);
  EXPECT_TRUE(close(cpu, interpreter, 1e-5, 1e-6));
  for (int i = 0; i < d0; ++i)
    for (int k = 0; k < d2; ++k) {
      double want = 0;
      for (int j = 0; j < d1; ++j)
        want += in[size_t(i) * s0 + j * s1 + k];
      ASSERT_NEAR(cpu[i * d2 + k], want, 1e-4) << i << ", " << k;
    }
}

} // namespace
