// Warpgroup MMAs waited for where their results are first read
// (backends/nvptx/lower_wgmma_waits.cpp): in a pipelined loop, two
// products whose tiles come from the loop's stages are issued one after
// the other, the first waited for (leaving the second in flight) where the
// arithmetic reads it, the second where it is read in turn. The kernel
// sums 2 A_k B_k - C_k D_k over blocks of K, with tails of M, N and K and
// a loop of no iteration; results against float64, outputs poisoned
// first. The PTX keeps the second group in flight past the first wait and
// assembles without ptxas serializing the MMAs; a row reduction within
// warps of one product runs with the other still in flight; and where an
// op other than straight-line register code (a store) comes between a
// product and its reader, the product is waited for before that op.
#include "nvptx/support.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

auto &overlapped_products() {
  static auto k = bl::kernel(
      "gpu_overlapped_products",
      [](bl::Ptr<bl::half> a, bl::Ptr<bl::half> b, bl::Ptr<bl::half> c,
         bl::Ptr<bl::half> d, bl::Ptr<float> out, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        auto rows =
            bl::expand_dims(bl::program_id(0) * BM + bl::arange(0, BM), 1);
        auto cols =
            bl::expand_dims(bl::program_id(1) * BN + bl::arange(0, BN), 0);
        auto k_row = bl::expand_dims(bl::arange(0, BK), 0);
        auto k_col = bl::expand_dims(bl::arange(0, BK), 1);
        auto acc = bl::zeros({BM, BN}, bl::float32);
        for (auto k : bl::range(0, K, BK)) {
          auto left_mask = (rows < M) & (k_row < K - k);
          auto right_mask = (k_col < K - k) & (cols < N);
          auto left = rows * K + k + k_row;
          auto right = (k + k_col) * N + cols;
          auto ab = bl::dot(bl::load(a + left, left_mask, 0.f),
                            bl::load(b + right, right_mask, 0.f));
          auto cd = bl::dot(bl::load(c + left, left_mask, 0.f),
                            bl::load(d + right, right_mask, 0.f));
          acc = acc + ab * 2.f - cd;
        }
        bl::store(out + rows * N + cols, acc, (rows < M) & (cols < N));
      });
  return k;
}

/// Two products, then a row maximum of the first (a reduction within
/// warps: shuffles only) before the second is read, as attention's softmax
/// of one block runs while another block's product is in flight.
auto &row_max_beside_a_product() {
  static auto k = bl::kernel(
      "gpu_row_max_beside_a_product",
      [](bl::Ptr<bl::half> a, bl::Ptr<bl::half> b, bl::Ptr<float> out,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        auto rows = bl::expand_dims(bl::arange(0, BM), 1);
        auto cols = bl::expand_dims(bl::arange(0, BN), 0);
        auto k_row = bl::expand_dims(bl::arange(0, BK), 0);
        auto k_col = bl::expand_dims(bl::arange(0, BK), 1);
        auto acc = bl::zeros({BM, BN}, bl::float32);
        for (auto k : bl::range(0, K, BK)) {
          auto left = bl::load(a + rows * K + k + k_row);
          auto right = bl::load(b + (k + k_col) * BN + cols);
          auto first = bl::dot(left, right);
          auto second = bl::dot(left, right, acc);
          acc = second - bl::expand_dims(bl::max(first, 1), 1);
        }
        bl::store(out + rows * BN + cols, acc);
      });
  return k;
}

/// A product, then a store that does not read it (the running sum before
/// the block, for one), then the product read.
auto &product_beside_a_store() {
  static auto k = bl::kernel(
      "gpu_product_beside_a_store",
      [](bl::Ptr<bl::half> a, bl::Ptr<bl::half> b, bl::Ptr<float> partial,
         bl::Ptr<float> out, bl::i32 K, bl::i32 KB, bl::Const<int> BM,
         bl::Const<int> BN, bl::Const<int> BK) {
        auto rows = bl::expand_dims(bl::arange(0, BM), 1);
        auto cols = bl::expand_dims(bl::arange(0, BN), 0);
        auto k_row = bl::expand_dims(bl::arange(0, BK), 0);
        auto k_col = bl::expand_dims(bl::arange(0, BK), 1);
        auto acc = bl::zeros({BM, BN}, bl::float32);
        for (auto kb : bl::range(0, KB, 1)) {
          auto k = kb * BK;
          auto ab = bl::dot(bl::load(a + rows * K + k + k_row),
                            bl::load(b + (k + k_col) * BN + cols));
          bl::store(partial + (kb * BM + rows) * BN + cols, acc);
          acc = acc + ab;
        }
        bl::store(out + rows * BN + cols, acc);
      });
  return k;
}

struct Shape {
  int m, n, k;
};

TEST(GpuMmaWaits, OverlappedProductsMatchFloat64) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int bm = 64, bn = 64, bk = 32;
  for (Shape s : {Shape{130, 200, 48}, Shape{64, 64, 256}, Shape{70, 33, 0},
                  Shape{97, 50, 177}}) {
    auto inputs = [&](size_t n) { return random_values<bl::half>(n, -2, 2); };
    auto a = inputs(size_t(s.m) * s.k), c = inputs(size_t(s.m) * s.k);
    auto b = inputs(size_t(s.k) * s.n), d = inputs(size_t(s.k) * s.n);
    DeviceBuffer<bl::half> da(a), db(b), dc(c), dd(d);
    for (int stages = 1; stages <= 3; ++stages) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                   std::to_string(s.k) + ", " + std::to_string(stages) +
                   " stages");
      auto dout = poisoned_on_gpu<float>(size_t(s.m) * s.n);
      LaunchOptions options = on(Backend::Gpu, 4);
      options.num_stages = stages;
      overlapped_products()[{bl::cdiv(s.m, bm), bl::cdiv(s.n, bn)}].with(
          options)(da, db, dc, dd, dout, s.m, s.n, s.k, bm, bn, bk);
      std::vector<float> got = dout.to_host();
      ASSERT_TRUE(all_written(got));
      for (int i = 0; i < s.m; ++i)
        for (int j = 0; j < s.n; ++j) {
          double want = 0, scale = 0;
          for (int l = 0; l < s.k; ++l) {
            double ab = as_double(a[size_t(i) * s.k + l]) *
                        as_double(b[size_t(l) * s.n + j]);
            double cd = as_double(c[size_t(i) * s.k + l]) *
                        as_double(d[size_t(l) * s.n + j]);
            want += 2 * ab - cd;
            scale += 2 * std::abs(ab) + std::abs(cd);
          }
          // Each block's products and sums in float32.
          ASSERT_LE(std::abs(got[size_t(i) * s.n + j] - want),
                    (s.k + 3 * bl::cdiv(s.k, bk) + 2) * 0x1p-24 * scale)
              << "element (" << i << ", " << j << ")";
        }
    }
  }
}

TEST(GpuMmaWaitsPtx, TheSecondProductStaysInFlightPastTheFirstWait) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  const bl::half *h = nullptr;
  float *out = nullptr;
  bl::Stages stages =
      overlapped_products().asm_for(bl::Target::gpu("sm_90a", 4, 3), h, h, h, h,
                                    out, 1024, 1024, 1024, 64, 64, 32);
  const std::string &ptx = stages[bl::Stage::Ptx];
  const std::string commit = "wgmma.commit_group.sync.aligned;";
  const std::string wait = "wgmma.wait_group.sync.aligned";
  const size_t first = ptx.find(commit);
  ASSERT_NE(first, std::string::npos) << ptx;
  const size_t second = ptx.find(commit, first + commit.size());
  ASSERT_NE(second, std::string::npos) << ptx;
  // No wait between the two products' groups; then the first result is
  // waited for with the second's group still in flight, and the second
  // after it.
  EXPECT_EQ(ptx.substr(first, second - first).find(wait), std::string::npos)
      << ptx.substr(first, second - first);
  const size_t wait_first = ptx.find(wait + " 1;", second);
  ASSERT_NE(wait_first, std::string::npos) << ptx.substr(second);
  EXPECT_NE(ptx.find(wait + " 0;", wait_first), std::string::npos)
      << ptx.substr(wait_first);
  if (ptxas()) {
    PtxasResult r = run_ptxas(ptx, "sm_90a", "-v");
    EXPECT_TRUE(r.ok) << r.output;
    EXPECT_THAT(r.output, Not(HasSubstr("serialized"))) << r.output;
  }
}

} // namespace

namespace {

TEST(GpuMmaWaitsPtx, ARowReductionWithinWarpsLeavesTheOtherProductInFlight) {
  const bl::half *h = nullptr;
  float *out = nullptr;
  bl::Stages stages = row_max_beside_a_product().asm_for(
      bl::Target::gpu("sm_90a", 4, 3), h, h, out, 1024, 64, 64, 32);
  const std::string &ptx = stages[bl::Stage::Ptx];
  const std::string wait = "wgmma.wait_group.sync.aligned";
  // The first product is waited for with the second in flight; the row
  // maximum's shuffles come before the second is waited for.
  const size_t first_wait = ptx.find(wait + " 1;");
  ASSERT_NE(first_wait, std::string::npos) << ptx;
  const size_t shuffle = ptx.find("shfl.sync.bfly", first_wait);
  const size_t second_wait = ptx.find(wait + " 0;", first_wait);
  ASSERT_NE(shuffle, std::string::npos) << ptx.substr(first_wait);
  ASSERT_NE(second_wait, std::string::npos) << ptx.substr(first_wait);
  EXPECT_LT(shuffle, second_wait) << ptx.substr(first_wait);
}

TEST(GpuMmaWaitsPtx, AnOpOutsideStraightLineRegisterCodeWaitsFirst) {
  const bl::half *h = nullptr;
  float *out = nullptr;
  bl::Stages stages = product_beside_a_store().asm_for(
      bl::Target::gpu("sm_90a", 4, 3), h, h, out, out, 1024, 32, 64, 64, 32);
  const std::string &ptx = stages[bl::Stage::Ptx];
  const size_t commit = ptx.find("wgmma.commit_group.sync.aligned;");
  ASSERT_NE(commit, std::string::npos) << ptx;
  // A store may synchronize and write memory: the product's group is
  // waited for before it, though the store does not read the product.
  const size_t wait = ptx.find("wgmma.wait_group.sync.aligned", commit);
  const size_t store = ptx.find("st.global", commit);
  ASSERT_NE(wait, std::string::npos) << ptx.substr(commit);
  ASSERT_NE(store, std::string::npos) << ptx.substr(commit);
  EXPECT_LT(wait, store) << ptx.substr(commit, store + 40 - commit);
}

} // namespace
