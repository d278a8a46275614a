// Assertions written by the kernel author: bl::static_assert_ fails the
// trace, bl::device_assert fails the run.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

TEST(DebugErrors, StaticAssertFails) {
  static int line;
  auto k = bl::kernel("needs_big_block", [](bl::Ptr<float> out,
                                            bl::Const<int> BLOCK) {
    (line = __LINE__, bl::static_assert_(BLOCK >= 32, "BLOCK must be >= 32"));
    bl::store(out + bl::arange(0, BLOCK), 1.f);
  });
  auto out = poisoned<float>(16);
  std::string msg = error_of([&] { k[{1}](out, 16); });
  EXPECT_THAT(msg, HasSubstr(at(line) + "static assertion failed: BLOCK must "
                                        "be >= 32"));
  EXPECT_TRUE(untouched(out));
}

TEST(DebugErrors, StaticAssertPassesForOtherSpecialization) {
  auto k = bl::kernel("needs_big_block_ok",
                      [](bl::Ptr<float> out, bl::Const<int> BLOCK) {
                        bl::static_assert_(BLOCK >= 32, "BLOCK must be >= 32");
                        bl::store(out + bl::arange(0, BLOCK), 1.f);
                      });
  std::vector<float> out(32);
  EXPECT_NO_THROW(k[{1}](out, 32));
  // A failed specialization is not cached: it fails again, with the message.
  std::vector<float> small(16);
  std::string msg = error_of([&] { k[{1}](small, 16); });
  EXPECT_THAT(msg, HasSubstr("static assertion failed"));
  msg = error_of([&] { k[{1}](small, 16); });
  EXPECT_THAT(msg, HasSubstr("static assertion failed"));
}

} // namespace
