// Elementwise kernels on the GPU against the CPU backend, bit for bit:
// masked loads with `other` under masks that change inside a vector,
// where, casts between floats, halves and integers, integer arithmetic,
// f32 math (exp and exp2: gpu_math_test.cpp), boolean buffers, scalar arguments
// of every width, 2-D blocks built from broadcast rows and columns, and program
// ids of a 3-D grid. Inputs are fresh random values, outputs poisoned; sizes
// are odd. Skipped (reported as skipped) where no GPU is present.
#include "nvptx/support.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

auto mixed = bl::kernel("mixed", [](bl::Ptr<float> x, bl::Ptr<int32_t> k,
                                    bl::Ptr<bl::half> h_out,
                                    bl::Ptr<float> f_out,
                                    bl::Ptr<int32_t> i_out, bl::i32 n,
                                    bl::f32 scale, bl::Const<int> BLOCK) {
  auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offs < n;
  // A mask that changes inside every vector of four: `other` shows.
  auto sparse = mask && (offs % 3 != 0);
  auto v = bl::load(x + offs, sparse, -2.5f);
  auto kv = bl::load(k + offs, mask, 7);
  auto w = bl::where(v > 0, v * scale, bl::cast(kv, bl::float32) / 3 - v);
  bl::store(h_out + offs, bl::cast(w, bl::float16), mask);
  bl::store(f_out + offs,
            bl::fma(w, v, scale) + bl::sqrt(bl::abs(v)) + bl::floor(v * 0.01f) -
                bl::log2(bl::abs(w) + 1) + bl::floor(w) * bl::rsqrt(scale),
            mask);
  bl::store(i_out + offs,
            ((kv >> 3) ^ (kv * 7)) + kv / 5 + kv % 4 + bl::cast(w, bl::int32) +
                bl::minimum(kv, 100) + bl::umulhi(kv, kv),
            mask);
});

TEST(GpuElementwise, MasksOtherWhereCastsAndMathMatchTheCpuBackend) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (int n : {1, 5, 1021, 40009}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto x = random_values<float>(n, -100, 100);
    auto k = random_values<int32_t>(n, -100000, 100000);
    float scale = 1.75f;
    DeviceBuffer<float> dx(x);
    DeviceBuffer<int32_t> dk(k);
    auto dh = poisoned_on_gpu<bl::half>(n);
    auto df = poisoned_on_gpu<float>(n);
    auto di = poisoned_on_gpu<int32_t>(n);
    mixed[{bl::cdiv(n, 512)}](dx, dk, dh, df, di, n, scale, 512);
    auto h = poisoned<bl::half>(n);
    auto f = poisoned<float>(n);
    auto i = poisoned<int32_t>(n);
    mixed[{bl::cdiv(n, 512)}].with(kCpu)(x, k, h, f, i, n, scale, 512);
    std::vector<bl::half> gpu_h = dh.to_host();
    std::vector<float> gpu_f = df.to_host();
    std::vector<int32_t> gpu_i = di.to_host();
    EXPECT_TRUE(all_written(gpu_f));
    EXPECT_TRUE(all_written(gpu_i));
    EXPECT_TRUE(same_bits(gpu_h, h));
    EXPECT_TRUE(same_bits(gpu_f, f));
    EXPECT_TRUE(same_bits(gpu_i, i));
  }
}

auto flags = bl::kernel("flags", [](bl::Ptr<float> x, bl::Ptr<bool> keep,
                                    bl::Ptr<float> out, bl::Ptr<bool> positive,
                                    bl::i32 n, bl::Const<int> BLOCK) {
  auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offs < n;
  auto v = bl::load(x + offs, mask);
  bl::store(out + offs, bl::where(bl::load(keep + offs, mask), v, -v), mask);
  bl::store(positive + offs, v > 0, mask);
});

TEST(GpuElementwise, BooleanBuffersLoadAndStoreAByteEach) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  int n = 3001;
  auto x = random_values<float>(n, -1, 1);
  std::vector<uint8_t> bits = random_values<uint8_t>(n, 0, 3);
  // bool buffers travel as bytes (std::vector<bool> packs bits).
  std::unique_ptr<bool[]> keep(new bool[n]);
  for (int i = 0; i < n; ++i)
    keep[i] = bits[i] != 0;
  DeviceBuffer<float> dx(x);
  DeviceBuffer<bool> dkeep(std::span<const bool>(keep.get(), n));
  auto dout = poisoned_on_gpu<float>(n);
  DeviceBuffer<bool> dpositive(n);
  dpositive.fill(true);
  flags[{bl::cdiv(n, 1024)}](dx, dkeep, dout, dpositive, n, 1024);
  std::vector<float> out = dout.to_host();
  std::unique_ptr<bool[]> positive(new bool[n]);
  dpositive.copy_to(std::span<bool>(positive.get(), n));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], keep[i] ? x[i] : -x[i]) << "element " << i;
    ASSERT_EQ(positive[i], x[i] > 0) << "element " << i;
  }
}

auto scalars = bl::kernel(
    "scalars", [](bl::Ptr<double> out, bl::i8 a, bl::u16 b, bl::i64 c,
                  bl::f16 h, bl::f64 d, bl::bf16 bf, bl::i1 flag, bl::u32 u) {
      bl::store(out + 0, bl::cast(a, bl::float64));
      bl::store(out + 1, bl::cast(b, bl::float64));
      bl::store(out + 2, bl::cast(c, bl::float64));
      bl::store(out + 3, bl::cast(h, bl::float64));
      bl::store(out + 4, d);
      bl::store(out + 5, bl::cast(bf, bl::float64));
      bl::store(out + 6, bl::where(flag, 1.0, -1.0));
      bl::store(out + 7, bl::cast(u, bl::float64));
    });

TEST(GpuElementwise, ScalarArgumentsOfEveryWidth) {
  BLOCC_REQUIRE_GPU();
  DeviceBuffer<double> dout = poisoned_on_gpu<double>(8);
  auto run = [&](auto &&out, const LaunchOptions &options) {
    scalars[{1}].with(options)(out, int8_t{-7}, uint16_t{65000},
                               int64_t{(int64_t{1} << 40) + 3}, bl::half(0.1f),
                               1e300, bl::bfloat16_t(3.14159f), true,
                               uint32_t{4000000000u});
  };
  run(dout, kGpu);
  std::vector<double> cpu = poisoned<double>(8);
  run(cpu, kCpu);
  std::vector<double> gpu = dout.to_host();
  EXPECT_TRUE(all_written(gpu));
  EXPECT_TRUE(same_bits(gpu, cpu));
  EXPECT_EQ(gpu[0], -7);
  EXPECT_EQ(gpu[2], double((int64_t{1} << 40) + 3));
  EXPECT_EQ(gpu[7], 4000000000.0);
}

auto outer_sum =
    bl::kernel("outer_sum", [](bl::Ptr<float> a, bl::Ptr<float> b,
                               bl::Ptr<float> out, bl::i32 m, bl::i32 n,
                               bl::Const<int> BM, bl::Const<int> BN) {
      auto rows = bl::program_id(0) * BM + bl::arange(0, BM);
      auto cols = bl::program_id(1) * BN + bl::arange(0, BN);
      auto av = bl::load(a + rows, rows < m);
      auto bv = bl::load(b + cols, cols < n);
      auto r = bl::expand_dims(rows, 1), c = bl::expand_dims(cols, 0);
      bl::store(out + r * n + c,
                bl::expand_dims(av, 1) * 3 + bl::expand_dims(bv, 0),
                (r < m) && (c < n));
    });

TEST(GpuElementwise, TwoDimensionalTilesFromBroadcasts) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  struct Shape {
    int m, n, bm, bn, warps;
  };
  for (Shape s : {Shape{1, 1, 16, 64, 4}, Shape{37, 129, 16, 64, 4},
                  Shape{64, 256, 32, 128, 8}, Shape{101, 3, 8, 4, 1},
                  Shape{7, 1000, 2, 256, 2}}) {
    SCOPED_TRACE(std::to_string(s.m) + " x " + std::to_string(s.n));
    auto a = random_values<float>(s.m, -1, 1);
    auto b = random_values<float>(s.n, -1, 1);
    DeviceBuffer<float> da(a), db(b);
    auto dout = poisoned_on_gpu<float>(size_t(s.m) * s.n);
    bl::Grid grid(bl::cdiv(s.m, s.bm), bl::cdiv(s.n, s.bn));
    outer_sum[grid].with(on(Backend::Gpu, s.warps))(da, db, dout, s.m, s.n,
                                                    s.bm, s.bn);
    std::vector<float> cpu = poisoned<float>(size_t(s.m) * s.n);
    outer_sum[grid].with(kCpu)(a, b, cpu, s.m, s.n, s.bm, s.bn);
    std::vector<float> gpu = dout.to_host();
    EXPECT_TRUE(all_written(gpu));
    EXPECT_TRUE(same_bits(gpu, cpu));
  }
}

auto positions = bl::kernel("positions", [](bl::Ptr<int32_t> out) {
  auto x = bl::program_id(0), y = bl::program_id(1), z = bl::program_id(2);
  auto nx = bl::num_programs(0), ny = bl::num_programs(1);
  auto linear = (z * ny + y) * nx + x;
  bl::store(out + linear, x + 10 * y + 100 * z + 1000 * nx + 10000 * ny +
                              100000 * bl::num_programs(2));
});

TEST(GpuElementwise, ProgramIdsOfAThreeDimensionalGrid) {
  BLOCC_REQUIRE_GPU();
  bl::Grid grid(7, 3, 5);
  auto dout = poisoned_on_gpu<int32_t>(7 * 3 * 5);
  positions[grid](dout);
  std::vector<int32_t> gpu = dout.to_host();
  for (int z = 0; z < 5; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 7; ++x)
        ASSERT_EQ(gpu[(z * 3 + y) * 7 + x],
                  x + 10 * y + 100 * z + 7000 + 30000 + 500000);
}

auto copy_back = bl::kernel("copy_back", [](bl::Ptr<float> buffer,
                                            bl::Ptr<float> out, bl::i32 n,
                                            bl::Const<int> BLOCK) {
  // Store a block, then read it back reversed (elements other threads
  // stored): the barrier after the store makes their writes visible, as
  // on the interpreter.
  auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offs < n;
  bl::store(buffer + offs, bl::load(buffer + offs, mask) * 2, mask);
  auto reversed =
      bl::program_id(0) * BLOCK + (BLOCK - 1 - bl::arange(0, BLOCK));
  bl::store(out + offs, bl::load(buffer + reversed, reversed < n) + 1, mask);
});

TEST(GpuElementwise, AProgramReadsWhatItsOtherThreadsStored) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  int n = 4096;
  auto x = random_values<float>(n, -1, 1);
  DeviceBuffer<float> d(x);
  auto dout = poisoned_on_gpu<float>(n);
  copy_back[{bl::cdiv(n, 1024)}](d, dout, n, 1024);
  std::vector<float> cpu = x, out = poisoned<float>(n);
  copy_back[{bl::cdiv(n, 1024)}].with(kCpu)(cpu, out, n, 1024);
  EXPECT_TRUE(all_written(dout.to_host()));
  EXPECT_TRUE(same_bits(dout.to_host(), out));
  EXPECT_TRUE(same_bits(d.to_host(), cpu));
}

// Runs without a GPU: the PTX of every kernel above, for the argument
// types and alignments the GPU tests launch them with (host buffers from
// malloc are 16-byte aligned like device buffers, so the specializations
// are the same), compiles and assembles for sm_80 and sm_90.
TEST(GpuElementwise, EveryKernelCompilesToPtxThatAssembles) {
  std::vector<float> f(1024);
  std::vector<int32_t> i(1024);
  std::vector<bl::half> h(1024);
  std::unique_ptr<bool[]> b(new bool[1024]);
  std::span<bool> bools(b.get(), 1024);
  expect_ptx_assembles(specialization(mixed, f, i, h, f, i, 1021, 1.75f, 512));
  expect_ptx_assembles(specialization(flags, f, bools, f, bools, 3001, 1024));
  std::vector<double> d(8);
  expect_ptx_assembles(specialization(
      scalars, d, int8_t{-7}, uint16_t{65000}, int64_t{3}, bl::half(0.1f),
      1e300, bl::bfloat16_t(3.14159f), true, uint32_t{4000000000u}));
  expect_ptx_assembles(specialization(outer_sum, f, f, f, 37, 129, 16, 64));
  expect_ptx_assembles(specialization(outer_sum, f, f, f, 64, 256, 32, 128), 8);
  expect_ptx_assembles(specialization(outer_sum, f, f, f, 101, 3, 8, 4), 1);
  expect_ptx_assembles(specialization(positions, i));
  expect_ptx_assembles(specialization(copy_back, f, f, 4096, 1024));
}

} // namespace
