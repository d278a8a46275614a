// Mistakes with tensor descriptors (bl::make_tensor_descriptor and its loads
// and stores), checked through a launch: the line of the mistake is named
// and nothing is written. (tests/unit/tensor_descriptor_test.cpp covers the
// message variants; these are the user's-eye view.)
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Every kernel is (x, out, n) over an n x n row-major matrix, n = 16; each
// ends by copying x's first tile to out, which must not happen.

void copy_first_tile(bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
  auto from = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
  auto to = bl::make_tensor_descriptor(out, {n, n}, {n, 1}, {16, 16});
  bl::store(to, {0, 0}, bl::load(from, {0, 0}));
}

TEST(TensorDescriptorErrors, LastStrideIsNotOne) {
  static int line;
  auto k = bl::kernel("td_stride", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                      bl::i32 n) {
    copy_first_tile(x, out, n);
    // A column-major view: its last stride is n.
    std::vector<bl::Operand> s{n, n}, t{1, n};
    auto d = (line = __LINE__, bl::make_tensor_descriptor(x, s, t, {16, 16}));
    (void)d;
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::make_tensor_descriptor: strides[1], the "
                             "last stride, must be 1"));
  EXPECT_THAT(msg, HasSubstr("for other layouts use bl::make_block_ptr"));
}

// A descriptor made in a bl::range body from a last stride of 1 before the
// loop, which the loop then changes: the stride is 1 on the first
// iteration only, which the trace reports when the body returns.
TEST(TensorDescriptorErrors, LastStrideChangedByTheLoopAroundIt) {
  static int line;
  auto k = bl::kernel("td_stride_in_loop", [](bl::Ptr<float> x,
                                              bl::Ptr<float> out, bl::i32 n) {
    copy_first_tile(x, out, n);
    bl::Tensor stride = bl::scalar(1, bl::int32);
    for (auto i : bl::range(0, 2, 1)) {
      std::vector<bl::Operand> s{n, n}, t{n, stride};
      auto d = (line = __LINE__, bl::make_tensor_descriptor(x, s, t, {16, 16}));
      (void)d;
      stride = stride + i;
    }
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("strides[1], the last stride, is 1 before the "
                             "bl::range loop around it, which changes it"));
}

TEST(TensorDescriptorErrors, RankMismatch) {
  static int line;
  auto k = bl::kernel(
      "td_rank", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        copy_first_tile(x, out, n);
        std::vector<bl::Operand> s{n, n}, t{n, 1};
        auto d = (line = __LINE__, bl::make_tensor_descriptor(x, s, t, {16}));
        (void)d;
      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::make_tensor_descriptor: rank mismatch: "
                             "shape has 2 entries, strides 2 and block_shape "
                             "1"));
}

TEST(TensorDescriptorErrors, BlockShapeNotAPowerOfTwo) {
  static int line;
  auto k = bl::kernel("td_pow2", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                    bl::i32 n) {
    copy_first_tile(x, out, n);
    std::vector<bl::Operand> s{n, n}, t{n, 1};
    auto d = (line = __LINE__, bl::make_tensor_descriptor(x, s, t, {16, 24}));
    (void)d;
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("block_shape [16, 24] has dimension 1 of size "
                             "24, which is not a power of two"));
}

TEST(TensorDescriptorErrors, RowsShorterThan16Bytes) {
  static int line;
  auto k = bl::kernel("td_row", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                   bl::i32 n) {
    copy_first_tile(x, out, n);
    std::vector<bl::Operand> s{n, n}, t{n, 1};
    auto d = (line = __LINE__, bl::make_tensor_descriptor(x, s, t, {16, 2}));
    (void)d;
  });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("a tensor descriptor's rows are at least 16 "
                             "bytes, as in Triton"));
}

TEST(TensorDescriptorErrors, WrongNumberOfOffsets) {
  static int line;
  auto k = bl::kernel(
      "td_offsets", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        copy_first_tile(x, out, n);
        auto d = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
        auto tile = (line = __LINE__, bl::load(d, {0, 0, 0}));
        (void)tile;
      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: 3 offsets for a tensor descriptor of "
                             "rank 2; give one offset per dimension"));
}

TEST(TensorDescriptorErrors, SixtyFourBitOffset) {
  static int line;
  auto k = bl::kernel(
      "td_offset64", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        copy_first_tile(x, out, n);
        auto d = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
        auto row = bl::cast(n, bl::int64);
        auto tile = (line = __LINE__, bl::load(d, {row, 0}));
        (void)tile;
      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::load: offsets[0] is "));
  EXPECT_THAT(msg, HasSubstr("tensor descriptor offsets are 32-bit, as in "
                             "Triton"));
}

TEST(TensorDescriptorErrors, StoredValueOfAnotherShape) {
  static int line;
  auto k = bl::kernel(
      "td_store", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        copy_first_tile(x, out, n);
        auto d = bl::make_tensor_descriptor(out, {n, n}, {n, 1}, {16, 16});
        auto row = bl::zeros({16}, bl::float32);
        (line = __LINE__, bl::store(d, {0, 0}, row));
      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("but the tensor descriptor's block is [16, 16]; "
                             "store a block of exactly that shape"));
}

TEST(TensorDescriptorErrors, AssignedADescriptorOfAnotherTile) {
  static int line;
  auto k = bl::kernel(
      "td_assign", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n) {
        copy_first_tile(x, out, n);
        auto d = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
        std::vector<bl::Operand> s{n, n}, t{n, 1};
        d = (line = __LINE__, bl::make_tensor_descriptor(x, s, t, {8, 16}));
      });
  std::string msg = run_x_out(k, 256, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("cannot assign a tensor descriptor of a block "
                             "[8, 16] of f32 to a variable that holds one of a "
                             "block [16, 16] of f32"));
}

} // namespace
