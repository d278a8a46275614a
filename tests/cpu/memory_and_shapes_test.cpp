// Memory access patterns and shape ops on the CPU backend against the
// interpreter: masked contiguous loads at every odd size (the vector path),
// strided gathers and scatters, scatters where lanes share an address (the
// last lane wins), booleans in memory, scalar accesses under a mask, 2-D
// blocks with broadcasts along either dimension, transposes, join / split /
// cat. Results must agree bit for bit.
#include "cpu/support.h"

namespace bl = blocc;
using namespace blocc::cpu_testing;

namespace {

// out[i] = x[i] * 2 + y[2 i] (+ other outside n): contiguous and strided
// masked loads in one loop, written back through a scatter to odd places.
auto strided = bl::kernel("strided", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                        bl::Ptr<float> out, bl::i32 n,
                                        bl::Const<int> BLOCK) {
  auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offs < n;
  auto a = bl::load(x + offs, mask, -1.5);
  auto b = bl::load(y + 2 * offs, mask, 4.0);
  bl::store(out + offs, a * 2 + b, mask);
  // Every third element again, reversed within the block.
  auto reversed =
      bl::program_id(0) * BLOCK + (BLOCK - 1 - bl::arange(0, BLOCK));
  bl::store(out + n + reversed, a - b, reversed < n && (reversed % 3 == 0));
});

class CpuStrided : public ::testing::TestWithParam<int> {};

TEST_P(CpuStrided, MatchesInterpreter) {
  BLOCC_SEED_TRACE();
  int n = GetParam();
  auto x = random_values<float>(n, -1, 1),
       y = random_values<float>(2 * n, -1, 1);
  auto cpu = poisoned<float>(2 * n), interpreter = poisoned<float>(2 * n);
  strided[{bl::cdiv(n, 32)}].with(kCpu)(x, y, cpu, n, 32);
  strided[{bl::cdiv(n, 32)}].with(kInterpreter)(x, y, interpreter, n, 32);
  EXPECT_TRUE(same(cpu, interpreter));
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(cpu[i], x[i] * 2 + y[2 * i]) << i;
}

INSTANTIATE_TEST_SUITE_P(OddSizes, CpuStrided,
                         ::testing::Values(1, 2, 3, 31, 32, 33, 97, 1000));

// Many lanes store to the same few addresses: lanes are written in order,
// so the last active lane of each address wins, as in the interpreter.
auto collide =
    bl::kernel("collide", [](bl::Ptr<int32_t> out, bl::Ptr<int32_t> where) {
      auto offs = bl::arange(0, 64);
      auto target = bl::load(where + offs);
      bl::store(out + target, offs * 10, offs % 5 != 4);
    });

TEST(CpuScatter, LanesSharingAnAddressKeepTheLastOne) {
  BLOCC_SEED_TRACE();
  auto where = random_values<int32_t>(64, 0, 6);
  auto cpu = poisoned<int32_t>(7), interpreter = poisoned<int32_t>(7);
  collide[{1}].with(kCpu)(cpu, where);
  collide[{1}].with(kInterpreter)(interpreter, where);
  EXPECT_TRUE(same(cpu, interpreter));
}

// Booleans occupy a byte; any nonzero byte loads as true.
auto flags = bl::kernel("flags", [](bl::Ptr<bool> in, bl::Ptr<bool> out,
                                    bl::Ptr<int32_t> count, bl::i32 n) {
  auto offs = bl::arange(0, 128);
  auto mask = offs < n;
  auto f = bl::load(in + offs, mask);
  bl::store(out + offs, !f, mask);
  bl::store(count, bl::sum(bl::cast(f, bl::int32)));
});

TEST(CpuBooleans, BytesInMemory) {
  BLOCC_SEED_TRACE();
  int n = 101;
  std::vector<uint8_t> raw = random_values<uint8_t>(n, 0, 3); // 2, 3: true
  bool *in = reinterpret_cast<bool *>(raw.data());
  std::vector<uint8_t> cpu(n, 0x5a), interpreter(n, 0x5a);
  std::vector<int32_t> count_cpu(1, -1), count_interpreter(1, -1);
  flags[{1}].with(kCpu)(in, reinterpret_cast<bool *>(cpu.data()), count_cpu, n);
  flags[{1}].with(kInterpreter)(
      in, reinterpret_cast<bool *>(interpreter.data()), count_interpreter, n);
  EXPECT_TRUE(same(cpu, interpreter));
  EXPECT_EQ(count_cpu, count_interpreter);
  int want = 0;
  for (uint8_t b : raw)
    want += b != 0;
  EXPECT_EQ(count_cpu[0], want);
}

// Scalar loads and stores under a mask, and a scalar argument of each
// width.
auto scalars =
    bl::kernel("scalars", [](bl::Ptr<double> x, bl::Ptr<double> out, bl::i32 n,
                             bl::i64 big, bl::f32 scale, bl::u8 small) {
      auto pid = bl::program_id(0);
      auto v = bl::load(x + pid, pid < n, 100.0);
      bl::store(out + pid,
                v * scale + bl::cast(big, bl::float64) +
                    bl::cast(small, bl::float64),
                pid % 2 == 0);
    });

TEST(CpuScalars, MaskedScalarAccessesAndArguments) {
  BLOCC_SEED_TRACE();
  auto x = random_values<double>(5, -1, 1);
  auto cpu = poisoned<double>(8), interpreter = poisoned<double>(8);
  scalars[{8}].with(kCpu)(x, cpu, 5, int64_t{1} << 40, 0.1f, uint8_t{200});
  scalars[{8}].with(kInterpreter)(x, interpreter, 5, int64_t{1} << 40, 0.1f,
                                  uint8_t{200});
  EXPECT_TRUE(same(cpu, interpreter));
}

// ------------------------------------------------------------- 2-D blocks
// out[i, j] = x[i, j] * row[i] + col[j] - x^T[i, j], on a BM x BN tile of an
// m x n matrix (masks on both dimensions), BM and BN from the launch.
auto tile =
    bl::kernel("tile", [](bl::Ptr<float> x, bl::Ptr<float> row,
                          bl::Ptr<float> col, bl::Ptr<float> out, bl::i32 m,
                          bl::i32 n, bl::Const<int> BM, bl::Const<int> BN) {
      auto rows = bl::program_id(0) * BM + bl::arange(0, BM);
      auto cols = bl::program_id(1) * BN + bl::arange(0, BN);
      auto r2 = bl::expand_dims(rows, 1), c2 = bl::expand_dims(cols, 0);
      auto mask = (r2 < m) && (c2 < n);
      auto v = bl::load(x + r2 * n + c2, mask);
      auto r = bl::load(row + rows, rows < m);
      auto c = bl::load(col + cols, cols < n);
      auto result = v * bl::expand_dims(r, 1) + bl::expand_dims(c, 0);
      bl::store(out + r2 * n + c2, result, mask);
    });

struct TileCase {
  int m, n, bm, bn;
};

class CpuTile : public ::testing::TestWithParam<TileCase> {};

TEST_P(CpuTile, BroadcastsAlongBothDimensions) {
  BLOCC_SEED_TRACE();
  auto [m, n, bm, bn] = GetParam();
  auto x = random_values<float>(m * n, -1, 1);
  auto row = random_values<float>(m, -1, 1),
       col = random_values<float>(n, -1, 1);
  auto cpu = poisoned<float>(m * n), interpreter = poisoned<float>(m * n);
  bl::Grid grid{bl::cdiv(m, bm), bl::cdiv(n, bn)};
  tile[grid].with(kCpu)(x, row, col, cpu, m, n, bm, bn);
  tile[grid].with(kInterpreter)(x, row, col, interpreter, m, n, bm, bn);
  EXPECT_TRUE(same(cpu, interpreter));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      ASSERT_EQ(cpu[i * n + j], x[i * n + j] * row[i] + col[j]);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuTile,
    ::testing::Values(TileCase{1, 1, 16, 16}, TileCase{17, 33, 16, 32},
                      TileCase{64, 8, 32, 8}, TileCase{5, 200, 1, 64},
                      TileCase{100, 3, 64, 2}, TileCase{31, 31, 8, 4}));

// trans, join/split, cat and reshape of loaded blocks.
auto shuffle =
    bl::kernel("shuffle", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> t,
                             bl::Ptr<int32_t> joined, bl::Ptr<int32_t> halves,
                             bl::Ptr<int32_t> stacked) {
      auto i = bl::arange(0, 8), j = bl::arange(0, 16);
      auto offs = bl::expand_dims(i, 1) * 16 + bl::expand_dims(j, 0);
      auto v = bl::load(x + offs); // 8 x 16
      auto vt = bl::trans(v);      // 16 x 8
      auto to = bl::expand_dims(j, 1) * 8 + bl::expand_dims(i, 0);
      bl::store(t + to, vt);
      auto flat = bl::reshape(v, {128});
      auto pair = bl::join(flat, flat * 3); // 128 x 2
      auto k = bl::arange(0, 128);
      bl::store(joined + bl::expand_dims(k, 1) * 2 +
                    bl::expand_dims(bl::arange(0, 2), 0),
                pair);
      auto [a, b] = bl::split(pair);
      bl::store(halves + k, a - b);
      auto both = bl::cat(flat, flat + 1000); // 256
      bl::store(stacked + bl::arange(0, 256), both);
    });

TEST(CpuShapeOps, TransJoinSplitCatReshape) {
  BLOCC_SEED_TRACE();
  auto x = random_values<int32_t>(128, -1000, 1000);
  auto run = [&](const bl::LaunchOptions &on) {
    auto t = poisoned<int32_t>(128), joined = poisoned<int32_t>(256),
         halves = poisoned<int32_t>(128), stacked = poisoned<int32_t>(256);
    shuffle[{1}].with(on)(x, t, joined, halves, stacked);
    return std::make_tuple(t, joined, halves, stacked);
  };
  auto cpu = run(kCpu), interpreter = run(kInterpreter);
  EXPECT_TRUE(same(std::get<0>(cpu), std::get<0>(interpreter)));
  EXPECT_TRUE(same(std::get<1>(cpu), std::get<1>(interpreter)));
  EXPECT_TRUE(same(std::get<2>(cpu), std::get<2>(interpreter)));
  EXPECT_TRUE(same(std::get<3>(cpu), std::get<3>(interpreter)));
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 16; ++c)
      ASSERT_EQ(std::get<0>(cpu)[c * 8 + r], x[r * 16 + c]);
  for (int k = 0; k < 128; ++k) {
    ASSERT_EQ(std::get<2>(cpu)[k], x[k] - 3 * x[k]);
    ASSERT_EQ(std::get<3>(cpu)[128 + k], x[k] + 1000);
  }
}

} // namespace
