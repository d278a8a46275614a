// Mistakes in loads, stores and pointer arithmetic: masks of the wrong shape
// or type, offsets that are not integers, things that are not pointers.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Each kernel takes (x, out, n) and makes one mistake.

TEST(MemoryErrors, LoadMaskOfIncompatibleShape) {
  static int line;
  auto k = bl::kernel(
      "load_mask_shape", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto wide_mask = bl::arange(0, 32) < n;
        auto v = (line = __LINE__, bl::load(x + offs, wide_mask));
        bl::store(out + offs, v);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: shapes [16] and [32] cannot be "
                             "broadcast together"));
  EXPECT_THAT(msg, HasSubstr("make them equal"));
}

TEST(MemoryErrors, LoadMaskLargerThanPointerBlock) {
  static int line;
  auto k = bl::kernel(
      "load_mask_rank", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto mask_2d = (bl::zeros({2, 16}, bl::int32) + offs) < n;
        auto v = (line = __LINE__, bl::load(x + offs, mask_2d));
        bl::store(out + offs, v);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: tensor<2x16xi1> does not fit the "
                             "pointer block"));
  EXPECT_THAT(msg, HasSubstr("masks and values must have the pointer's shape"));
}

TEST(MemoryErrors, StoreMaskOfIncompatibleShape) {
  static int line;
  auto k = bl::kernel(
      "store_mask_shape", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto v = bl::load(x + offs);
        auto narrow_mask = bl::arange(0, 8) < n;
        (line = __LINE__, bl::store(out + offs, v, narrow_mask));
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::store: shapes [16] and [8] cannot be "
                             "broadcast together"));
}

TEST(MemoryErrors, StoreValueOfIncompatibleShape) {
  static int line;
  auto k = bl::kernel("store_value_shape",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto v = bl::load(x + bl::arange(0, 32));
                        (line = __LINE__, bl::store(out + offs, v, offs < n));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::store: shapes [16] and [32] cannot be "
                             "broadcast together"));
}

TEST(MemoryErrors, LoadOtherOfIncompatibleShape) {
  static int line;
  auto k = bl::kernel(
      "load_other_shape", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto other = bl::zeros({8}, bl::float32);
        auto v = (line = __LINE__, bl::load(x + offs, offs < n, other));
        bl::store(out + offs, v);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: shapes [16] and [8] cannot be "
                             "broadcast together"));
}

TEST(MemoryErrors, LoadMaskNotBoolean) {
  static int line;
  auto k = bl::kernel(
      "load_int_mask", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        auto offs = bl::arange(0, 16);
        auto v = (line = __LINE__, bl::load(x + offs, n - offs));
        bl::store(out + offs, v);
      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: the mask must be boolean (i1), got "
                             "tensor<16xi32>"));
  EXPECT_THAT(msg, HasSubstr("build it with a comparison such as offsets < n"));
}

TEST(MemoryErrors, StoreMaskNotBoolean) {
  static int line;
  auto k = bl::kernel("store_float_mask",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto v = bl::load(x + offs);
                        (line = __LINE__, bl::store(out + offs, v, v));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::store: the mask must be boolean (i1), got "
                             "tensor<16xf32>"));
}

TEST(MemoryErrors, PointerPlusFloatOffset) {
  static int line;
  auto k = bl::kernel("float_offset",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto half_steps = bl::cast(offs, bl::float32) * 0.5f;
                        auto ptrs = (line = __LINE__, x + half_steps);
                        bl::store(out + offs, bl::load(ptrs));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("pointer arithmetic needs an integer offset, got "
                             "tensor<16xf32>"));
  EXPECT_THAT(msg, HasSubstr("convert it with bl::cast(x, bl::int32)"));
}

TEST(MemoryErrors, PointerPlusFloatConstant) {
  static int line;
  auto k = bl::kernel("float_constant_offset",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto ptrs = (line = __LINE__, x + 1.5);
                        bl::store(out + offs, bl::load(ptrs + offs));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("pointer arithmetic needs an integer offset, got "
                             "float constant 1.5"));
}

TEST(MemoryErrors, PointerPlusBooleanOffset) {
  static int line;
  auto k = bl::kernel("bool_offset",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto ptrs = (line = __LINE__, x + (offs < n));
                        bl::store(out + offs, bl::load(ptrs));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("pointer arithmetic needs an integer offset, got "
                             "tensor<16xi1>"));
}

TEST(MemoryErrors, AddingTwoPointers) {
  static int line;
  auto k = bl::kernel("ptr_plus_ptr",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto ptrs = (line = __LINE__, x + out);
                        bl::store(out + offs, bl::load(ptrs + offs));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("cannot combine two pointers with '+'"));
}

// The two-pointer message suggests bl::cast(pointer, bl::int64); following
// the hint must work, or the hint must change.
TEST(MemoryErrors, TwoPointersHintIsFollowable) {
  auto k = bl::kernel("ptr_distance", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                         bl::Ptr<int64_t> out) {
    bl::store(out, bl::cast(y, bl::int64) - bl::cast(x, bl::int64));
  });
  std::vector<float> x(4), y(4);
  std::vector<int64_t> out(1);
  k[{1}](x, y, out);
  EXPECT_EQ(out[0], (reinterpret_cast<intptr_t>(y.data()) -
                     reinterpret_cast<intptr_t>(x.data())));
}

TEST(MemoryErrors, PointerCastToNarrowInteger) {
  static int line;
  auto k = bl::kernel("ptr_to_i32", [](bl::Ptr<float> x, bl::Ptr<int> out) {
    auto address = (line = __LINE__, bl::cast(x, bl::int32));
    bl::store(out, address);
  });
  std::vector<float> x(4);
  auto out = poisoned<int>(1);
  std::string msg = error_of([&] { k[{1}](x, out); });
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("converts only to bl::int64"));
  EXPECT_TRUE(untouched(out));
}

TEST(MemoryErrors, MultiplyingAPointer) {
  static int line;
  auto k = bl::kernel("ptr_times_int",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto ptrs = (line = __LINE__, x * 2);
                        bl::store(out + offs, bl::load(ptrs + offs));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("pointers only support + and - with an integer "
                             "offset"));
}

TEST(MemoryErrors, SubtractingAPointerFromAnInteger) {
  static int line;
  auto k = bl::kernel("int_minus_ptr",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto ptrs = (line = __LINE__, offs - x);
                        bl::store(out + offs, bl::load(ptrs));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("cannot subtract a pointer from an integer"));
}

TEST(MemoryErrors, ComparingAPointerWithAnInteger) {
  static int line;
  auto k = bl::kernel("ptr_lt_int",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto mask = (line = __LINE__, x + offs < n);
                        bl::store(out + offs, bl::load(x + offs, mask));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator<: cannot compare a pointer with i32"));
}

TEST(MemoryErrors, LoadFromNonPointer) {
  static int line;
  auto k = bl::kernel("load_ints",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto v = (line = __LINE__, bl::load(offs, offs < n));
                        bl::store(out + offs, v);
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load needs a pointer or a block of pointers "
                             "as its first argument, got tensor<16xi32>"));
}

TEST(MemoryErrors, StoreToNonPointer) {
  static int line;
  auto k = bl::kernel("store_to_ints",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        (line = __LINE__, bl::store(offs, bl::load(x + offs)));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::store needs a pointer or a block of "
                             "pointers as its first argument, got "
                             "tensor<16xi32>"));
}

TEST(MemoryErrors, StoringPointers) {
  static int line;
  auto k = bl::kernel("store_ptrs",
                      [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        (line = __LINE__, bl::store(out + offs, x + offs));
                      });
  std::string msg = run_x_out(k, 64, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::store: storing pointers is not supported"));
}

} // namespace
