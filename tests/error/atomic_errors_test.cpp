// Mistakes with atomics: something that is not a pointer, element types the
// atomic does not support, masks and values that do not fit the pointer
// block, and atomics on a read-only buffer. Each names the line and the fix;
// nothing is written.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Each kernel takes (x, out, n) over int32 buffers and makes one mistake;
// `run` launches it on poisoned buffers and returns the message.
std::string run(auto &k) {
  auto x = poisoned<int32_t>(64);
  auto out = poisoned<int32_t>(64);
  std::string msg = error_of([&] { k[{1}](x, out, 16); });
  EXPECT_TRUE(untouched(x)) << "the kernel wrote x";
  EXPECT_TRUE(untouched(out)) << "the kernel wrote out";
  return msg;
}

TEST(AtomicErrors, NotAPointer) {
  static int line;
  auto k = bl::kernel("atomic_offsets",
                      [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        (line = __LINE__, bl::atomic_add(offs, 1));
                      });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_add needs a pointer or a "
                                        "block of pointers as its first "
                                        "argument, got tensor<16xi32>; pass "
                                        "e.g. out + offsets"));
}

TEST(AtomicErrors, BitwiseOnFloats) {
  static int line;
  auto k = bl::kernel("atomic_and_float", [](bl::Ptr<int32_t> x,
                                             bl::Ptr<int32_t> out, bl::i32 n,
                                             bl::Ptr<float> f) {
    (line = __LINE__, bl::atomic_and(f + bl::arange(0, 16), 1));
  });
  auto x = poisoned<int32_t>(16), out = poisoned<int32_t>(16);
  auto f = poisoned<float>(16);
  std::string msg = error_of([&] { k[{1}](x, out, 16, f); });
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_and needs integer "
                                        "elements, got f32; bitwise atomics "
                                        "are defined on integers only"));
  EXPECT_TRUE(untouched(f));
}

TEST(AtomicErrors, NarrowIntegers) {
  static int line;
  auto k =
      bl::kernel("atomic_int16", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out,
                                    bl::i32 n, bl::Ptr<int16_t> small) {
        (line = __LINE__, bl::atomic_add(small + bl::arange(0, 16), 1));
      });
  auto x = poisoned<int32_t>(16), out = poisoned<int32_t>(16);
  auto small = poisoned<int16_t>(16);
  std::string msg = error_of([&] { k[{1}](x, out, 16, small); });
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_add does not support i16 "
                                        "elements; atomics work on 32- and "
                                        "64-bit integers and floats (use an "
                                        "int32 buffer)"));
  EXPECT_TRUE(untouched(small));
}

TEST(AtomicErrors, HalfOnlyForAdd) {
  static int line;
  auto k =
      bl::kernel("atomic_max_half", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out,
                                       bl::i32 n, bl::Ptr<bl::half> h) {
        (line = __LINE__, bl::atomic_max(h + bl::arange(0, 16), 1.0f));
      });
  auto x = poisoned<int32_t>(16), out = poisoned<int32_t>(16);
  std::vector<bl::half> h(16, bl::half(3.0f));
  std::string msg = error_of([&] { k[{1}](x, out, 16, h); });
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_max does not support f16 "
                                        "elements (only atomic_add does); use "
                                        "a float32 buffer"));
  for (const bl::half &v : h)
    EXPECT_EQ(v.bits, bl::half(3.0f).bits);
}

TEST(AtomicErrors, MaskOfIncompatibleShape) {
  static int line;
  auto k = bl::kernel("atomic_mask_shape",
                      [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto mask = bl::arange(0, 32) < n;
                        (line = __LINE__, bl::atomic_add(out + offs, 1, mask));
                      });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_add: shapes [16] and "
                                        "[32] cannot be broadcast together"));
}

TEST(AtomicErrors, MaskLargerThanPointerBlock) {
  static int line;
  auto k = bl::kernel("atomic_mask_rank",
                      [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        auto mask = (bl::zeros({2, 16}, bl::int32) + offs) < n;
                        (line = __LINE__, bl::atomic_max(out + offs, 1, mask));
                      });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_max: the mask "
                                        "tensor<2x16xi1> does not fit the "
                                        "pointer block tensor<16xptr<i32>>; "
                                        "it must have the pointer's shape (or "
                                        "broadcast to it)"));
}

TEST(AtomicErrors, MaskNotBoolean) {
  static int line;
  auto k = bl::kernel("atomic_mask_int",
                      [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out, bl::i32 n) {
                        auto offs = bl::arange(0, 16);
                        (line = __LINE__, bl::atomic_or(out + offs, 1, offs));
                      });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_or: the mask must be "
                                        "boolean (i1), got tensor<16xi32>; "
                                        "build it with a comparison such as "
                                        "offsets < n"));
}

TEST(AtomicErrors, BlockValueThroughScalarPointer) {
  static int line;
  auto k = bl::kernel("atomic_value_shape",
                      [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out, bl::i32 n) {
                        auto values = bl::load(x + bl::arange(0, 16));
                        (line = __LINE__, bl::atomic_xchg(out, values));
                      });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_xchg: the value "
                                        "tensor<16xi32> does not fit the "
                                        "pointer block ptr<i32>"));
}

TEST(AtomicErrors, PointerValue) {
  static int line;
  auto k = bl::kernel("atomic_pointer_value",
                      [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out, bl::i32 n) {
                        (line = __LINE__, bl::atomic_xchg(out, x));
                      });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_xchg: the value is "
                                        "ptr<i32>, a pointer; atomics update "
                                        "numbers"));
}

TEST(AtomicErrors, CasOnBytes) {
  static int line;
  auto k =
      bl::kernel("atomic_cas_i8", [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> out,
                                     bl::i32 n, bl::Ptr<int8_t> bytes) {
        (line = __LINE__, bl::atomic_cas(bytes, 0, 1));
      });
  auto x = poisoned<int32_t>(16), out = poisoned<int32_t>(16);
  auto bytes = poisoned<int8_t>(16);
  std::string msg = error_of([&] { k[{1}](x, out, 16, bytes); });
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_cas does not support i8 "
                                        "elements; it swaps 16-, 32- or "
                                        "64-bit elements (use an int32 "
                                        "buffer)"));
  EXPECT_TRUE(untouched(bytes));
}

TEST(AtomicErrors, CasCompareOfWrongShape) {
  static int line;
  auto k = bl::kernel("atomic_cas_shape", [](bl::Ptr<int32_t> x,
                                             bl::Ptr<int32_t> out, bl::i32 n) {
    auto offs = bl::arange(0, 16);
    auto expected = bl::load(x + bl::arange(0, 32));
    (line = __LINE__, bl::atomic_cas(out + offs, expected, 1));
  });
  std::string msg = run(k);
  EXPECT_THAT(msg, HasSubstr(at(line) + "bl::atomic_cas: shapes [16] and "
                                        "[32] cannot be broadcast together"));
}

// A buffer passed as const may not be updated: the launch (not the trace)
// names the argument and the launch's line.
TEST(AtomicErrors, ReadOnlyBuffer) {
  auto k = bl::kernel("atomic_read_only", [](bl::Ptr<int32_t> counter) {
    bl::atomic_add(counter, 1);
  });
  const std::vector<int32_t> counter(1, 7);
  static int line;
  std::string msg = error_of([&] { (line = __LINE__, k[{1}](counter)); });
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("is read-only, but the kernel writes through it; "
                             "pass a mutable buffer"));
  EXPECT_EQ(counter[0], 7);
}

} // namespace
