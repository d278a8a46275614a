// bl::make_block_ptr / advance / load / store: the desugared IR (pointer
// arithmetic in int64, masks only for the checked dimensions), block
// pointers carried through bl::range, and tiled kernels of odd sizes run by
// the reference interpreter on buffers sized exactly, so that a wrong mask
// is an out-of-bounds error rather than a silent pass.
#include "backends/interpreter/interpreter.h"
#include "blocc/blocc.h"
#include "blocc/block_ptr.h"
#include "blocc/trace.h"
#include "ir/passes.h"
#include "unit/tracing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

namespace bl = blocc;

namespace {

using blocc::Error;
using blocc::KernelArg;
using blocc::Tensor;
using blocc::ir::OpCode;
using blocc::ir::Scalar;
using blocc::ir::Type;
using ::testing::HasSubstr;

using namespace blocc::unit_testing;

/// A value that is not an input element and not zero: what an element the
/// kernel should not write keeps.
constexpr float kPoison = -12345.0f;

std::vector<float> iota_floats(size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>(i) + 0.25f;
  return v;
}

// ------------------------------------------------------------ structure

TEST(BlockPtr, LoadDesugarsToInt64PointerArithmeticAndAMask) {
  auto fn = trace({pointer(Scalar::F32), scalar(Scalar::I32),
                   scalar(Scalar::I32), pointer(Scalar::F32)},
                  [](const Args &a) {
                    Tensor base(a[0]), m(a[1]), n(a[2]), out(a[3]);
                    auto p = bl::make_block_ptr(base, {m, n}, {n, 1}, {0, 16},
                                                {32, 16}, {1, 0});
                    EXPECT_EQ(p.rank(), 2);
                    EXPECT_EQ(p.block_shape(), (bl::Shape{32, 16}));
                    EXPECT_EQ(p.dtype(), bl::float32);
                    EXPECT_EQ(p.shape(0).type().str(), "i64");
                    EXPECT_EQ(p.stride(1).type().str(), "i64");
                    EXPECT_EQ(p.offset(1).type().str(), "i64");
                    Tensor tile = bl::load(p, {1});
                    EXPECT_EQ(tile.type().str(), "tensor<32x16xf32>");
                    bl::store(bl::make_block_ptr(out, {32, 16}, {16, 1}, {0, 0},
                                                 {32, 16}, {1, 0}),
                              tile);
                  });
  blocc::ir::Operation *load = find_op(*fn, OpCode::Load);
  ASSERT_NE(load, nullptr);
  ASSERT_EQ(load->num_operands(), 2u); // pointers and mask; zero padding
  EXPECT_EQ(load->operand(0)->type().str(), "tensor<32x16xptr<f32>>");
  blocc::ir::Operation *addptr = load->operand(0)->defining_op();
  ASSERT_NE(addptr, nullptr);
  EXPECT_EQ(addptr->code(), OpCode::AddPtr);
  EXPECT_EQ(addptr->operand(1)->type().str(), "tensor<32x16xi64>");
  // One dimension checked: one lower and one upper bound comparison.
  EXPECT_EQ(count_ops(*fn, OpCode::Cmp), 2);
  EXPECT_EQ(load->loc().file, "block_ptr_test.cpp");
}

// A load or store that checks every dimension (a load padded with zeros,
// no cache hints) is a descriptor access (ir/tensor_descriptor.h), its
// offsets the block pointer's int64 ones: the GPU backend may copy its tile
// with TMA; every other backend rewrites it into the pointers and mask
// that desugaring builds. Any other access is desugared at trace time.
TEST(BlockPtr, AccessesCheckingEveryDimensionAreDescriptorAccesses) {
  auto fn = trace(
      {pointer(Scalar::F32), scalar(Scalar::I32), pointer(Scalar::F32)},
      [](const Args &a) {
        Tensor x(a[0]), n(a[1]), out(a[2]);
        auto p =
            bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 16}, {32, 16}, {1, 0});
        auto o =
            bl::make_block_ptr(out, {n, n}, {n, 1}, {0, 16}, {32, 16}, {1, 0});
        bl::store(o, bl::load(p, {1, 0}), {0, 1});
      });
  blocc::ir::Operation *load = find_op(*fn, OpCode::DescriptorLoad);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->result()->type().str(), "tensor<32x16xf32>");
  EXPECT_EQ(load->num_operands(), 7u); // base, 2 extents, 2 strides, 2 offsets
  for (size_t i = 1; i < 7; ++i)
    EXPECT_EQ(load->operand(i)->type().str(), "i64") << "operand " << i;
  EXPECT_EQ(count_ops(*fn, OpCode::DescriptorStore), 1);
  EXPECT_EQ(count_ops(*fn, OpCode::Load) + count_ops(*fn, OpCode::Store), 0);
  EXPECT_EQ(load->loc().file, "block_ptr_test.cpp");
  // Rewritten, they check both dimensions of both tiles.
  blocc::ir::lower_tensor_descriptors(*fn);
  EXPECT_EQ(count_ops(*fn, OpCode::DescriptorLoad), 0);
  ASSERT_NE(find_op(*fn, OpCode::Load), nullptr);
  EXPECT_EQ(find_op(*fn, OpCode::Load)->num_operands(), 2u); // zero padding
  EXPECT_EQ(find_op(*fn, OpCode::Store)->num_operands(), 3u);
}

TEST(BlockPtr, NanPaddingAndCacheHintsKeepPointerAccesses) {
  auto fn =
      trace({pointer(Scalar::F16), pointer(Scalar::F16)}, [](const Args &a) {
        Tensor x(a[0]), y(a[1]);
        auto p = bl::make_block_ptr(x, {40}, {1}, {0}, {64}, {0});
        auto q = bl::make_block_ptr(y, {40}, {1}, {0}, {64}, {0});
        bl::LoadOptions hinted;
        hinted.cache = bl::Cache::CacheAll;
        bl::StoreOptions streamed;
        streamed.eviction = bl::Eviction::EvictFirst;
        bl::store(q, bl::load(p, {0}, bl::Padding::NaN), {0});
        bl::store(q, bl::load(p, {0}, bl::Padding::Zero, hinted), {0},
                  streamed);
      });
  EXPECT_EQ(count_ops(*fn, OpCode::DescriptorLoad), 0);
  EXPECT_EQ(count_ops(*fn, OpCode::Load), 2);
  // The first store checks every dimension and has no hint.
  EXPECT_EQ(count_ops(*fn, OpCode::DescriptorStore), 1);
  EXPECT_EQ(count_ops(*fn, OpCode::Store), 1);
}

// Descriptors address numbers: a block pointer to pointers keeps its
// checked accesses desugared.
TEST(BlockPtr, BlockPointersToPointersStayPointerAccesses) {
  auto fn = trace({pointer(Scalar::Ptr)}, [](const Args &a) {
    Tensor x(a[0]);
    auto p = bl::make_block_ptr(x, {40}, {1}, {0}, {64}, {0});
    EXPECT_EQ(bl::load(p, {0}).type().str(), "tensor<64xptr<i8, 0>>");
  });
  EXPECT_EQ(count_ops(*fn, OpCode::DescriptorLoad), 0);
  EXPECT_EQ(count_ops(*fn, OpCode::Load), 1);
}

TEST(BlockPtr, NoBoundaryCheckMeansNoMask) {
  auto fn =
      trace({pointer(Scalar::F16), pointer(Scalar::F16)}, [](const Args &a) {
        Tensor x(a[0]), y(a[1]);
        auto p = bl::make_block_ptr(x, {64}, {1}, {0}, {64}, {0});
        auto q = bl::make_block_ptr(y, {64}, {1}, {0}, {64}, {0});
        bl::store(q, bl::load(p, {}, bl::Padding::NaN));
      });
  EXPECT_EQ(count_ops(*fn, OpCode::Cmp), 0);
  EXPECT_EQ(find_op(*fn, OpCode::Load)->num_operands(), 1u);
  EXPECT_EQ(find_op(*fn, OpCode::Store)->num_operands(), 2u);
}

TEST(BlockPtr, AdvanceInALoopCarriesOnlyTheMovingOffset) {
  auto fn =
      trace({pointer(Scalar::F32), scalar(Scalar::I32), pointer(Scalar::F32)},
            [](const Args &a) {
              Tensor x(a[0]), n(a[1]), out(a[2]);
              auto p = bl::make_block_ptr(x, {16, n}, {n, 1}, {0, 0}, {16, 32},
                                          {1, 0});
              Tensor acc = bl::zeros({16, 32}, bl::float32);
              for (auto k : bl::range(0, n, 32)) {
                (void)k;
                acc += bl::load(p, {1});
                p = bl::advance(p, {0, 32});
              }
              auto o = bl::make_block_ptr(out, {16, 32}, {32, 1}, {0, 0},
                                          {16, 32}, {1, 0});
              bl::store(o, acc);
            });
  blocc::ir::Operation *loop = find_op(*fn, OpCode::For);
  ASSERT_NE(loop, nullptr);
  // acc and p's column offset; p's base, shape, strides and row offset are
  // loop-invariant and fold back to their values before the loop.
  std::vector<std::string> carried;
  for (size_t i = 0; i < loop->num_results(); ++i)
    carried.push_back(loop->result(i)->type().str());
  EXPECT_THAT(carried,
              ::testing::UnorderedElementsAre("tensor<16x32xf32>", "i64"));
}

// ------------------------------------------------------ values, interpreted

/// dst[i, j] = src[i, j] for i < M, j < N, tile by tile, through block
/// pointers on row-major arrays with leading dimensions lds and ldd.
std::unique_ptr<blocc::ir::Function> tiled_copy_kernel(int64_t bm, int64_t bn) {
  return trace({pointer(Scalar::F32), pointer(Scalar::F32), scalar(Scalar::I32),
                scalar(Scalar::I32), scalar(Scalar::I32), scalar(Scalar::I32)},
               [&](const Args &a) {
                 Tensor src(a[0]), dst(a[1]), m(a[2]), n(a[3]), lds(a[4]),
                     ldd(a[5]);
                 Tensor row = bl::program_id(0) * bm,
                        col = bl::program_id(1) * bn;
                 auto from = bl::make_block_ptr(src, {m, n}, {lds, 1},
                                                {row, col}, {bm, bn}, {1, 0});
                 auto to = bl::make_block_ptr(dst, {m, n}, {ldd, 1}, {row, col},
                                              {bm, bn}, {1, 0});
                 bl::store(to, bl::load(from, {0, 1}), {0, 1});
               });
}

TEST(BlockPtr, TiledCopyOfOddSizes) {
  const int bm = 16, bn = 32;
  auto fn = tiled_copy_kernel(bm, bn);
  for (auto [m, n] : {std::pair{37, 53}, std::pair{16, 32}, std::pair{1, 1},
                      std::pair{33, 95}}) {
    int lds = n + 3, ldd = n + 8;
    // Sized exactly: the last row has only n elements, so that a lane the
    // mask should drop is an out-of-bounds access in the interpreter.
    std::vector<float> src =
        iota_floats(static_cast<size_t>((m - 1) * lds + n));
    std::vector<float> dst(static_cast<size_t>((m - 1) * ldd + n), kPoison);
    blocc::interp::interpret(*fn, blocc::Grid(bl::cdiv(m, bm), bl::cdiv(n, bn)),
                             {buffer(src), buffer(dst), KernelArg::of_int(m),
                              KernelArg::of_int(n), KernelArg::of_int(lds),
                              KernelArg::of_int(ldd)});
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < ldd && i * ldd + j < static_cast<int>(dst.size());
           ++j)
        ASSERT_EQ(dst[i * ldd + j], j < n ? src[i * lds + j] : kPoison)
            << m << "x" << n << " at (" << i << ", " << j << ")";
  }
}

TEST(BlockPtr, AdvanceInsideRangeWalksAcrossTheRow) {
  // out[i, j] = sum over tiles t of src[i, t*BN + j], and the tiles are
  // also copied to dst through a second advancing block pointer.
  const int bm = 8, bn = 16;
  auto fn = trace(
      {pointer(Scalar::F32), pointer(Scalar::F32), pointer(Scalar::F32),
       scalar(Scalar::I32), scalar(Scalar::I32)},
      [&](const Args &a) {
        Tensor src(a[0]), dst(a[1]), out(a[2]), m(a[3]), n(a[4]);
        Tensor row = bl::program_id(0) * bm;
        auto p =
            bl::make_block_ptr(src, {m, n}, {n, 1}, {row, 0}, {bm, bn}, {1, 0});
        auto q =
            bl::make_block_ptr(dst, {m, n}, {n, 1}, {row, 0}, {bm, bn}, {1, 0});
        Tensor acc = bl::zeros({bm, bn}, bl::float32);
        for (auto k : bl::range(0, n, bn)) {
          (void)k;
          Tensor tile = bl::load(p, {0, 1});
          acc += tile;
          bl::store(q, tile, {0, 1});
          p = bl::advance(p, {0, bn});
          q = bl::advance(q, {0, bn});
        }
        auto o = bl::make_block_ptr(out, {m, bn}, {bn, 1}, {row, 0}, {bm, bn},
                                    {1, 0});
        bl::store(o, acc, {0});
      });
  const int m = 21, n = 75;
  std::vector<float> src = iota_floats(static_cast<size_t>(m * n), 0.5f);
  std::vector<float> dst(src.size(), kPoison),
      out(static_cast<size_t>(m * bn), kPoison);
  blocc::interp::interpret(*fn, blocc::Grid(bl::cdiv(m, bm)),
                           {buffer(src), buffer(dst), buffer(out),
                            KernelArg::of_int(m), KernelArg::of_int(n)});
  EXPECT_EQ(dst, src);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < bn; ++j) {
      float want = 0.0f;
      for (int t = 0; t * bn < n; ++t)
        want += t * bn + j < n ? src[i * n + t * bn + j] : 0.0f;
      ASSERT_EQ(out[i * bn + j], want) << "(" << i << ", " << j << ")";
    }
}

TEST(BlockPtr, AdvanceByARuntimeStep) {
  // Three tiles of 8 starting at `start`, `start + step`, ...; partial
  // tiles at either end of the array read zero.
  auto fn = trace({pointer(Scalar::F32), scalar(Scalar::I32),
                   scalar(Scalar::I32), pointer(Scalar::F32)},
                  [](const Args &a) {
                    Tensor x(a[0]), start(a[1]), step(a[2]), out(a[3]);
                    auto p =
                        bl::make_block_ptr(x, {40}, {1}, {start}, {8}, {0});
                    Tensor acc = bl::zeros({8}, bl::float32);
                    for (auto k : bl::range(0, 3)) {
                      (void)k;
                      acc += bl::load(p, {0});
                      p = bl::advance(p, {step});
                    }
                    bl::store(out + bl::arange(0, 8), acc);
                  });
  std::vector<float> x = iota_floats(40);
  for (auto [start, step] : {std::pair{0, 13}, std::pair{30, -13},
                             std::pair{-5, 20}, std::pair{36, 1}}) {
    std::vector<float> out(8, kPoison);
    blocc::interp::interpret(*fn, blocc::Grid(1),
                             {buffer(x), KernelArg::of_int(start),
                              KernelArg::of_int(step), buffer(out)});
    for (int lane = 0; lane < 8; ++lane) {
      float want = 0.0f;
      for (int t = 0; t < 3; ++t) {
        int index = start + t * step + lane;
        want += index >= 0 && index < 40 ? x[index] : 0.0f;
      }
      EXPECT_EQ(out[lane], want)
          << "start " << start << ", step " << step << ", lane " << lane;
    }
  }
}

TEST(BlockPtr, PaddingAndNegativeOffsets) {
  // A block of 8 starting at offset -3 of an array of 5: lanes 0..2 and
  // none past the end are outside.
  auto fn =
      trace({pointer(Scalar::F32), scalar(Scalar::I32), pointer(Scalar::F32)},
            [](const Args &a) {
              Tensor x(a[0]), start(a[1]), out(a[2]);
              auto p = bl::make_block_ptr(x, {5}, {1}, {start}, {8}, {0});
              Tensor i = bl::arange(0, 8);
              bl::store(out + i, bl::load(p, {0}, bl::Padding::NaN));
              bl::store(out + 8 + i, bl::load(p, {0}));
            });
  std::vector<float> x = {10, 11, 12, 13, 14};
  for (int start : {-3, 0, 2, 5, -8}) {
    std::vector<float> out(16, kPoison);
    blocc::interp::interpret(
        *fn, blocc::Grid(1),
        {buffer(x), KernelArg::of_int(start), buffer(out)});
    for (int lane = 0; lane < 8; ++lane) {
      int index = start + lane;
      bool inside = index >= 0 && index < 5;
      if (inside) {
        EXPECT_EQ(out[lane], x[index])
            << "start " << start << ", lane " << lane;
        EXPECT_EQ(out[8 + lane], x[index]);
      } else {
        EXPECT_TRUE(std::isnan(out[lane]))
            << "start " << start << ", lane " << lane;
        EXPECT_EQ(out[8 + lane], 0.0f);
      }
    }
  }
}

TEST(BlockPtr, ThreeDimensionalStridedTile) {
  // A [3, 5, 7] array stored with strides (1, 3, 15) (dimension 0 fastest),
  // read as a [2, 4, 8] tile at (1, 2, -1), written to a dense [2, 4, 8].
  auto fn =
      trace({pointer(Scalar::I32), pointer(Scalar::I32)}, [](const Args &a) {
        Tensor x(a[0]), out(a[1]);
        auto p = bl::make_block_ptr(x, {3, 5, 7}, {1, 3, 15}, {1, 2, -1},
                                    {2, 4, 8}, {0, 1, 2});
        auto o = bl::make_block_ptr(out, {2, 4, 8}, {32, 8, 1}, {0, 0, 0},
                                    {2, 4, 8}, {2, 1, 0});
        bl::store(o, bl::load(p, {0, 1, 2}));
      });
  std::vector<int32_t> x(3 * 5 * 7);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 100 + static_cast<int32_t>(i);
  std::vector<int32_t> out(64, -1);
  blocc::interp::interpret(*fn, blocc::Grid(1), {buffer(x), buffer(out)});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 8; ++k) {
        int a = 1 + i, b = 2 + j, c = -1 + k;
        bool inside = a < 3 && b < 5 && c >= 0 && c < 7;
        int32_t want = inside ? x[a * 1 + b * 3 + c * 15] : 0;
        ASSERT_EQ(out[i * 32 + j * 8 + k], want) << i << ", " << j << ", " << k;
      }
}

TEST(BlockPtr, CarriedThroughIf) {
  auto fn =
      trace({pointer(Scalar::F32), scalar(Scalar::I32), pointer(Scalar::F32)},
            [](const Args &a) {
              Tensor x(a[0]), flag(a[1]), out(a[2]);
              auto p = bl::make_block_ptr(x, {32}, {1}, {0}, {8}, {0});
              bl::if_(
                  flag != 0, [&] { p = bl::advance(p, {8}); },
                  [&] { p = bl::advance(p, {16}); });
              bl::store(out + bl::arange(0, 8), bl::load(p));
            });
  std::vector<float> x = iota_floats(32);
  for (int flag : {0, 1}) {
    std::vector<float> out(8, kPoison);
    blocc::interp::interpret(*fn, blocc::Grid(1),
                             {buffer(x), KernelArg::of_int(flag), buffer(out)});
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(out[i], x[(flag ? 8 : 16) + i]) << "flag " << flag;
  }
}

TEST(BlockPtr, StoreConvertsAndBroadcastsAScalar) {
  auto fn = trace({pointer(Scalar::F16)}, [](const Args &a) {
    Tensor y(a[0]);
    auto q = bl::make_block_ptr(y, {10}, {1}, {0}, {16}, {0});
    bl::store(q, 1.5, {0});
  });
  std::vector<bl::half> y(10, bl::half(0.0f));
  blocc::interp::interpret(*fn, blocc::Grid(1), {buffer(y)});
  for (const bl::half &h : y)
    EXPECT_EQ(static_cast<float>(h), 1.5f);
}

// --------------------------------------------------------------- errors

const std::vector<Type> kPtrAndInt = {pointer(Scalar::F32),
                                      scalar(Scalar::I32)};

TEST(BlockPtrErrors, RankMismatch) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_block_ptr(x, {n, n}, {n}, {0, 0}, {16, 16}, {1, 0});
  });
  EXPECT_THAT(m, HasSubstr("block_ptr_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::make_block_ptr: rank mismatch: shape has 2 "
                           "entries, strides 1, offsets 2, block_shape 2 and "
                           "order 2; give each one entry per dimension"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_block_ptr(x, {n}, {1}, {0}, {16}, {1, 0});
  });
  EXPECT_THAT(m, HasSubstr("rank mismatch: shape has 1 entries, strides 1, "
                           "offsets 1, block_shape 1 and order 2"));
}

TEST(BlockPtrErrors, AdvanceRankMismatch) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
    p = bl::advance(p, {16});
  });
  EXPECT_THAT(m, HasSubstr("block_ptr_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::advance: rank mismatch: 1 offsets for a block "
                           "pointer of rank 2; give one offset per dimension"));
}

TEST(BlockPtrErrors, BlockDimensionsArePowersOfTwo) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 24}, {1, 0});
  });
  EXPECT_THAT(m, HasSubstr("block_ptr_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::make_block_ptr: block_shape [16, 24] has "
                           "dimension 1 of size 24, which is not a power of "
                           "two; round it up and let boundary_check mask"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_block_ptr(x, {n, n, n, n}, {1, 1, 1, 1}, {0, 0, 0, 0},
                       {2, 2, 2, 2}, {3, 2, 1, 0});
  });
  EXPECT_THAT(m, HasSubstr("has 4 dimensions; a block pointer has 1 to 3"));
}

TEST(BlockPtrErrors, BoundaryCheckDimensionOutOfRange) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
    bl::load(p, {0, 2});
  });
  EXPECT_THAT(m, HasSubstr("block_ptr_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::load: boundary_check dimension 2 is out of "
                           "range for a block pointer of rank 2; list "
                           "dimensions 0 to 1"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto p = bl::make_block_ptr(x, {n}, {1}, {0}, {16}, {0});
    bl::store(p, 0.0, {-1});
  });
  EXPECT_THAT(
      m, HasSubstr("bl::store: boundary_check dimension -1 is out of range"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
    bl::load(p, {1, 1});
  });
  EXPECT_THAT(m, HasSubstr("bl::load: boundary_check lists dimension 1 twice"));
}

TEST(BlockPtrErrors, StoredValueMustHaveTheBlockShape) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 32}, {1, 0});
    bl::store(p, bl::zeros({32, 16}, bl::float32), {0, 1});
  });
  EXPECT_THAT(m, HasSubstr("block_ptr_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::store: the value has shape [32, 16] but the "
                           "block pointer's block is [16, 32]; store a value "
                           "of the block's shape (or a scalar)"));
  // Broadcastable is not enough: Triton wants the block's shape exactly.
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 32}, {1, 0});
    bl::store(p, bl::zeros({1, 32}, bl::float32));
  });
  EXPECT_THAT(m, HasSubstr("the value has shape [1, 32] but the block "
                           "pointer's block is [16, 32]"));
}

TEST(BlockPtrErrors, NanPaddingNeedsFloats) {
  std::string m = trace_error({pointer(Scalar::I32)}, [](const Args &a) {
    auto p = bl::make_block_ptr(Tensor(a[0]), {10}, {1}, {0}, {16}, {0});
    bl::load(p, {0}, bl::Padding::NaN);
  });
  EXPECT_THAT(m, HasSubstr("bl::load: Padding::NaN needs a floating-point "
                           "block pointer, got one to i32"));
}

TEST(BlockPtrErrors, BaseMustBeAScalarPointer) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_block_ptr(x + bl::arange(0, 4), {n}, {1}, {0}, {4}, {0});
  });
  EXPECT_THAT(m, HasSubstr("bl::make_block_ptr: base must be a pointer (such "
                           "as a bl::Ptr<T> kernel argument), got "
                           "tensor<4xptr<f32>>"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor n(a[1]);
    bl::make_block_ptr(n, {n}, {1}, {0}, {4}, {0});
  });
  EXPECT_THAT(m, HasSubstr("base must be a pointer"));
}

TEST(BlockPtrErrors, OffsetsAre32BitScalarIntegers) {
  std::string m = trace_error(
      {pointer(Scalar::F32), scalar(Scalar::I64)}, [](const Args &a) {
        Tensor x(a[0]), off(a[1]);
        bl::make_block_ptr(x, {100}, {1}, {off}, {16}, {0});
      });
  EXPECT_THAT(m, HasSubstr("bl::make_block_ptr: offsets[0] is i64; block "
                           "pointer offsets are 32-bit, as in Triton: convert "
                           "it with bl::cast(x, bl::int32)"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]);
    bl::make_block_ptr(x, {100}, {1}, {int64_t{1} << 33}, {16}, {0});
  });
  EXPECT_THAT(m, HasSubstr("offsets[0] 8589934592 does not fit in int32"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]);
    bl::make_block_ptr(x, {100}, {bl::arange(0, 2)}, {0}, {16}, {0});
  });
  EXPECT_THAT(m, HasSubstr("bl::make_block_ptr: strides[0] must be a scalar, "
                           "got tensor<2xi32>"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]);
    auto p = bl::make_block_ptr(x, {100}, {1}, {0}, {16}, {0});
    p = bl::advance(p, {2.5});
  });
  EXPECT_THAT(m, HasSubstr("bl::advance: offsets[0] must be an integer, got "
                           "float constant"));
}

TEST(BlockPtrErrors, OrderIsAPermutation) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 1});
  });
  EXPECT_THAT(m, HasSubstr("bl::make_block_ptr: order [1, 1] is not a "
                           "permutation of the dimensions 0 to 1"));
}

TEST(BlockPtrErrors, AssignmentKeepsTheLayout) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
    p = bl::make_block_ptr(x, {n, n}, {n, 1}, {0, 0}, {16, 32}, {1, 0});
  });
  EXPECT_THAT(m, HasSubstr("block_ptr_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("cannot assign a block pointer to a block [16, 32] "
                           "of f32 with order [1, 0] to a variable that holds "
                           "a block [16, 16] of f32 with order [1, 0]"));
}

TEST(BlockPtrErrors, EmptyAndLoopLocalBlockPointers) {
  std::string m = trace_error(kPtrAndInt, [](const Args &) {
    bl::BlockPtr p;
    bl::load(p);
  });
  EXPECT_THAT(m, HasSubstr("bl::load: this block pointer is empty; assign it "
                           "from bl::make_block_ptr first"));
  // Assigned only inside the loop: its tensors have no value after it.
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::BlockPtr p;
    for (auto k : bl::range(0, n, 16)) {
      (void)k;
      p = bl::make_block_ptr(x, {n}, {1}, {0}, {16}, {0});
    }
    bl::load(p);
  });
  EXPECT_THAT(m, HasSubstr("assigned inside the bl::range loop"));
}

} // namespace
