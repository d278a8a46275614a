// blocc::autotune on the CPU backend: one tuning per key, the choice kept
// in memory and in the cache directory (read back by a fresh tuner, not
// by one with other configurations), arguments restored around trial runs
// of an in-place kernel, BLOCC_PRINT_AUTOTUNING, and every misuse a clear
// error naming the kernel and the name at fault.
#include "cpu/cache_support.h"
#include "cpu/support.h"

#include <gmock/gmock.h>

namespace bl = blocc;
using namespace blocc::cpu_testing;
using blocc::cache_testing::ScopedEnvironment;
using blocc::cache_testing::TemporaryDirectory;
using ::testing::HasSubstr;

namespace {

auto add = bl::kernel(
    "tuned_add", {"x", "y", "out", "n", "BLOCK"},
    [](bl::Ptr<float> x, bl::Ptr<float> y, bl::Ptr<float> out, bl::i32 n,
       bl::Const<int> BLOCK) {
      auto i = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      bl::store(out + i, bl::load(x + i, i < n) + bl::load(y + i, i < n),
                i < n);
    });

// x = 2x + 1 in place: every trial run would change x again.
auto affine_in_place =
    bl::kernel("affine_in_place", {"x", "n", "BLOCK"},
               [](bl::Ptr<float> x, bl::i32 n, bl::Const<int> BLOCK) {
                 auto i = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
                 bl::store(x + i, 2.f * bl::load(x + i, i < n) + 1.f, i < n);
               });

std::vector<bl::Config> block_configs() {
  return {bl::Config({{"BLOCK", 64}}), bl::Config({{"BLOCK", 256}}),
          bl::Config({{"BLOCK", 1024}}, 8)};
}

auto grid_for(int n) {
  return [n](const bl::Config &c) { return bl::Grid(bl::cdiv(n, c["BLOCK"])); };
}

void expect_sum(const std::vector<float> &x, const std::vector<float> &y,
                const std::vector<float> &out) {
  ASSERT_EQ(x.size(), out.size());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << "element " << i;
}

TEST(Autotune, TunesOncePerKeyAndReusesTheChoice) {
  BLOCC_SEED_TRACE();
  ScopedEnvironment cache("BLOCC_CACHE_DIR", "off");
  auto tuned = bl::autotune(add, block_configs(), {"n"});
  for (int n : {1, 997, 997, 100003}) {
    auto x = random_values<float>(n, -1, 1), y = random_values<float>(n, -1, 1);
    auto out = poisoned<float>(n);
    tuned[grid_for(n)](x, y, out, n);
    expect_sum(x, y, out);
  }
  // Three keys (n = 1, 997, 100003), three configurations each.
  EXPECT_EQ(tuned.num_tunings(), 9u);
  auto chosen = tuned.chosen();
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_THAT(chosen[0].first, HasSubstr("n="));
  EXPECT_THAT(chosen[0].first, HasSubstr("on=host"));
}

TEST(Autotune, TheChoicePersistsInTheCacheDirectory) {
  TemporaryDirectory dir;
  ScopedEnvironment cache("BLOCC_CACHE_DIR", dir.path());
  const int n = 5000;
  auto x = random_values<float>(n, -1, 1), y = random_values<float>(n, -1, 1);
  auto out = poisoned<float>(n);
  {
    auto tuned = bl::autotune(add, block_configs(), {"n"});
    tuned[grid_for(n)](x, y, out, n);
    EXPECT_EQ(tuned.num_tunings(), 3u);
  }
  EXPECT_FALSE(std::filesystem::is_empty(dir / "autotune"));
  {
    // Another tuner (another process, as far as it knows): read back.
    auto tuned = bl::autotune(add, block_configs(), {"n"});
    out = poisoned<float>(n);
    tuned[grid_for(n)](x, y, out, n);
    EXPECT_EQ(tuned.num_tunings(), 0u);
    EXPECT_EQ(tuned.chosen().size(), 1u);
    expect_sum(x, y, out);
  }
  {
    // Other configurations: another file, tuned afresh.
    auto configs = block_configs();
    configs.push_back(bl::Config({{"BLOCK", 128}}, 2));
    auto tuned = bl::autotune(add, configs, {"n"});
    tuned[grid_for(n)](x, y, out, n);
    EXPECT_EQ(tuned.num_tunings(), 4u);
  }
}

TEST(Autotune, RestoreKeepsTrialRunsFromChangingTheData) {
  BLOCC_SEED_TRACE();
  ScopedEnvironment cache("BLOCC_CACHE_DIR", "off");
  const int n = 3001;
  auto original = random_values<float>(n, -1, 1);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = 2.0 * original[i] + 1.0; // exact in float32 here
  {
    auto tuned = bl::autotune(affine_in_place, block_configs(), {"n"},
                              {.restore = {"x"}});
    auto x = original;
    tuned[grid_for(n)](x, n);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(x[i], float(want[i])) << "element " << i;
  }
  {
    // Without restore, the trial runs compound: what restore is for.
    auto tuned = bl::autotune(affine_in_place, block_configs(), {"n"});
    auto x = original;
    tuned[grid_for(n)](x, n);
    EXPECT_NE(x[0], float(want[0]));
  }
}

TEST(Autotune, PrintsWhatItChoseWhenAsked) {
  ScopedEnvironment cache("BLOCC_CACHE_DIR", "off");
  ScopedEnvironment print("BLOCC_PRINT_AUTOTUNING", "1");
  auto tuned = bl::autotune(add, block_configs(), {"n"});
  const int n = 77;
  auto x = random_values<float>(n, -1, 1), y = x, out = poisoned<float>(n);
  ::testing::internal::CaptureStderr();
  tuned[grid_for(n)](x, y, out, n);
  std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, HasSubstr("autotune: kernel 'tuned_add' key n=77,"));
  EXPECT_THAT(printed, HasSubstr("num_warps="));
  EXPECT_THAT(printed, HasSubstr("measured best"));
}

template <typename F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const bl::Error &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AutotuneErrors, NameTheKernelAndTheCulprit) {
  ScopedEnvironment cache("BLOCC_CACHE_DIR", "off");
  EXPECT_THAT(error_of([] {
                bl::autotune(add, {bl::Config({{"BLOCK_Q", 64}})}, {"n"});
              }),
              HasSubstr("autotune of kernel 'tuned_add': configuration 0 "
                        "(BLOCK_Q=64 num_warps=4 num_stages=3) names "
                        "'BLOCK_Q', which is not a parameter of the kernel "
                        "(its parameters: x, y, out, n, BLOCK)"));
  EXPECT_THAT(error_of([] {
                bl::autotune(add, {bl::Config({{"n", 64}})}, {});
              }),
              HasSubstr("sets 'n', a bl::i32 parameter; only bl::Const "
                        "parameters are tuned"));
  EXPECT_THAT(
      error_of([] {
        bl::autotune(add, {bl::Config({{"BLOCK", 64}}), bl::Config({})}, {});
      }),
      HasSubstr("every configuration sets the same ones"));
  EXPECT_THAT(error_of([] { bl::autotune(add, block_configs(), {"size"}); }),
              HasSubstr("the key names 'size', which is not a parameter"));
  EXPECT_THAT(error_of([] { bl::autotune(add, block_configs(), {"BLOCK"}); }),
              HasSubstr("the key names 'BLOCK', which the configurations set"));
  EXPECT_THAT(error_of([] {
                bl::autotune(add, block_configs(), {}, {.restore = {"n"}});
              }),
              HasSubstr("restore names 'n', a bl::i32 parameter"));
  EXPECT_THAT(error_of([] { bl::autotune(add, {}, {}); }),
              HasSubstr("no configuration to choose from"));
  auto unnamed =
      bl::kernel("unnamed", [](bl::Ptr<float> x, bl::Const<int> BLOCK) {
        bl::store(x + bl::arange(0, BLOCK), 0.f);
      });
  EXPECT_THAT(error_of([&] {
                bl::autotune(unnamed, {bl::Config({{"BLOCK", 64}})}, {});
              }),
              HasSubstr("the kernel's parameters have no names"));

  auto tuned = bl::autotune(add, block_configs(), {"n"});
  std::vector<float> v(8);
  EXPECT_THAT(error_of([&] { tuned[grid_for(8)](v, v, v, 8, 64); }),
              HasSubstr("takes 4 arguments (the kernel's parameters but the "
                        "tuned BLOCK), got 5"));
  float *raw = v.data();
  auto in_place =
      bl::autotune(affine_in_place, block_configs(), {}, {.restore = {"x"}});
  EXPECT_THAT(error_of([&] { in_place[grid_for(8)](raw, 8); }),
              HasSubstr("restore names 'x', whose size is unknown"));
  // Block sizes must be powers of two: no configuration can run.
  auto bad = bl::autotune(
      add, {bl::Config({{"BLOCK", 3}}), bl::Config({{"BLOCK", 5}})}, {"n"});
  std::string all_failed = error_of([&] { bad[grid_for(8)](v, v, v, 8); });
  EXPECT_THAT(all_failed, HasSubstr("every configuration failed"));
  EXPECT_THAT(all_failed, HasSubstr("BLOCK=3 num_warps=4"));
  EXPECT_THAT(all_failed, HasSubstr("BLOCK=5 num_warps=4"));
}

} // namespace
