// Mistakes with block pointers (bl::make_block_ptr, bl::advance and their
// loads and stores), checked through a launch: the line of the mistake is
// named and nothing is written. (tests/unit/block_ptr_test.cpp covers every
// message variant; these are the user's-eye view.)
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Every kernel is (x, out, n) over an n x n row-major matrix.

TEST(BlockPtrErrors, RankMismatch) {
  static int line;
  auto k = bl::kernel(
      "bp_rank", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        std::vector<bl::Operand> d{n, n}, s{n}, o{0, 0}; // s lacks a stride
        auto p =
            (line = __LINE__, bl::make_block_ptr(x, d, s, o, {16, 16}, {1, 0}));
        bl::store(out + bl::arange(0, 16), 1.f);
        (void)p;
      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::make_block_ptr: rank mismatch: shape has 2 "
                             "entries, strides 1"));
  EXPECT_THAT(msg, HasSubstr("give each one entry per dimension"));
}

TEST(BlockPtrErrors, BlockShapeNotPowerOfTwo) {
  static int line;
  auto k = bl::kernel("bp_shape", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                     bl::i32 n) {
    auto p = (line = __LINE__, bl::make_block_ptr(x, {n}, {1}, {0}, {12}, {0}));
    (void)p;
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("block_shape [12] has dimension 0 of size 12, "
                             "which is not a power of two"));
  EXPECT_THAT(msg, HasSubstr("let boundary_check mask the extra elements"));
}

TEST(BlockPtrErrors, OrderNotAPermutation) {
  static int line;
  auto k = bl::kernel("bp_order", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                     bl::i32 n) {
    std::vector<bl::Operand> d{n, n}, s{n, 1}, o{0, 0};
    std::vector<int> order{1, 1}; // dimension 0 is missing
    auto p = (line = __LINE__, bl::make_block_ptr(x, d, s, o, {16, 16}, order));
    (void)p;
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("order [1, 1] is not a permutation of the "
                             "dimensions 0 to 1"));
  EXPECT_THAT(msg, HasSubstr("{1, 0} for a row-major matrix"));
}

TEST(BlockPtrErrors, BoundaryCheckDimensionOutOfRange) {
  static int line;
  auto k = bl::kernel("bp_check", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                     bl::i32 n) {
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
    auto q = bl::make_block_ptr(out, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
    auto tile = (line = __LINE__, bl::load(p, {0, 2}));
    bl::store(q, tile);
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: boundary_check dimension 2 is out of "
                             "range for a block pointer of rank 2; list "
                             "dimensions 0 to 1"));
}

TEST(BlockPtrErrors, StoredValueOfAnotherShape) {
  static int line;
  auto k = bl::kernel("bp_store_shape", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                           bl::i32 n) {
    auto q = bl::make_block_ptr(out, {n, n}, {n, 1}, {0, 0}, {16, 8}, {1, 0});
    auto tile = bl::zeros({8, 16}, bl::float32);
    (line = __LINE__, bl::store(q, tile, {0, 1}));
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::store: the value has shape [8, 16] but the "
                             "block pointer's block is [16, 8]"));
}

TEST(BlockPtrErrors, AdvanceRankMismatch) {
  static int line;
  auto k = bl::kernel("bp_advance", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                       bl::i32 n) {
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
    p = (line = __LINE__, bl::advance(p, {16}));
    bl::store(out + bl::arange(0, 16), 1.f);
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::advance: rank mismatch: 1 offsets for a "
                             "block pointer of rank 2"));
}

TEST(BlockPtrErrors, BaseIsABlockOfPointers) {
  static int line;
  auto k = bl::kernel("bp_base", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                    bl::i32 n) {
    auto ptrs = x + bl::arange(0, 16);
    auto p =
        (line = __LINE__, bl::make_block_ptr(ptrs, {n}, {1}, {0}, {16}, {0}));
    (void)p;
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::make_block_ptr: base must be a pointer"));
  EXPECT_THAT(msg, HasSubstr("load it with bl::load(pointers, mask)"));
}

TEST(BlockPtrErrors, SixtyFourBitOffset) {
  static int line;
  auto k = bl::kernel("bp_offset64", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                        bl::i32 n) {
    auto start = bl::cast(n, bl::int64);
    auto p =
        (line = __LINE__, bl::make_block_ptr(x, {n}, {1}, {start}, {16}, {0}));
    (void)p;
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("offsets[0] is i64; block pointer offsets are "
                             "32-bit"));
  EXPECT_THAT(msg, HasSubstr("bl::cast(x, bl::int32)"));
}

TEST(BlockPtrErrors, NanPaddingOfIntegers) {
  static int line;
  auto k =
      bl::kernel("bp_nan_int", [](bl::Ptr<int> x, bl::Ptr<int> out, bl::i32 n) {
        auto p = bl::make_block_ptr(x, {n}, {1}, {0}, {16}, {0});
        auto v = (line = __LINE__, bl::load(p, {0}, bl::Padding::NaN));
        bl::store(out + bl::arange(0, 16), v);
      });
  std::vector<int> x(16, 1);
  auto out = poisoned<int>(16);
  std::string msg = error_of([&] { k[{1}](x, out, 10); });
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("Padding::NaN needs a floating-point block "
                             "pointer, got one to i32; use Padding::Zero"));
  EXPECT_TRUE(untouched(out));
}

TEST(BlockPtrErrors, ReassignedWithAnotherLayout) {
  static int line;
  auto k = bl::kernel(
      "bp_relayout", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        std::vector<bl::Operand> d{n, n}, s{n, 1}, o{0, 0};
        auto p = bl::make_block_ptr(x, d, s, o, {16, 16}, {1, 0});
        p = (line = __LINE__, bl::make_block_ptr(x, d, s, o, {8, 16}, {1, 0}));
      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("cannot assign a block pointer to a block [8, 16] "
                             "of f32 with order [1, 0] to a variable that "
                             "holds a block [16, 16]"));
  EXPECT_THAT(msg, HasSubstr("declare a new variable for another layout"));
}

TEST(BlockPtrErrors, LoadThroughAnEmptyBlockPointer) {
  static int line;
  auto k = bl::kernel("bp_empty",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        bl::BlockPtr p;
                        auto v = (line = __LINE__, bl::load(p));
                        bl::store(out + bl::arange(0, 16), v);
                      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: this block pointer is empty; assign "
                             "it from bl::make_block_ptr first"));
}

} // namespace
