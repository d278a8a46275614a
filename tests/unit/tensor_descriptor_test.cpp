// bl::make_tensor_descriptor and its loads and stores: the traced IR (one
// descriptor op per access, operands in ir/tensor_descriptor.h's order),
// what rewrite-tensor-descriptors makes of it, and the two against each
// other in the reference interpreter (which runs descriptor ops directly)
// on odd sizes, random inputs and offsets that cross the array's edges,
// with exactly sized buffers so that an element the mask should drop is an
// out-of-bounds error. The trace-time messages of every mistake are here;
// tests/error has the user's-eye view.
#include "backends/interpreter/interpreter.h"
#include "blocc/blocc.h"
#include "blocc/trace.h"
#include "ir/clone.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/tensor_descriptor.h"

#include "test_seed.h"
#include "unit/tracing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <random>
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
using ::testing::Not;

using namespace blocc::unit_testing;

/// The kernel as traced, before any pass (descriptor ops still in it).
std::unique_ptr<blocc::ir::Function>
trace(const std::vector<Type> &types,
      const std::function<void(const Args &)> &body) {
  return blocc::unit_testing::trace(types, body, /*divisibility=*/1);
}

/// The same function after the default pipeline and the rewrite of its
/// descriptor accesses, as the CPU backend lowers it.
std::unique_ptr<blocc::ir::Function>
rewritten(const blocc::ir::Function &traced) {
  std::unique_ptr<blocc::ir::Function> fn = blocc::ir::clone(traced);
  blocc::ir::run_default_pipeline(*fn);
  blocc::ir::lower_tensor_descriptors(*fn);
  return fn;
}

std::vector<float> random_floats(size_t n) {
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(blocc::test_seed::rng());
  return v;
}

/// Every byte 0x5a: an element nobody should write keeps it.
std::vector<float> poisoned(size_t n) {
  std::vector<float> v(n);
  std::memset(v.data(), 0x5a, n * sizeof(float));
  return v;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// ------------------------------------------------------------ structure

TEST(TensorDescriptor, AnAccessIsOneOpWithTheDescriptorsOperands) {
  auto fn =
      trace({pointer(Scalar::F16), scalar(Scalar::I32), scalar(Scalar::I64),
             scalar(Scalar::I32)},
            [](const Args &a) {
              Tensor x(a[0]), m(a[1]), n(a[2]), ld(a[3]);
              auto d = bl::make_tensor_descriptor(x, {m, n}, {ld, 1}, {32, 16});
              EXPECT_EQ(d.rank(), 2);
              EXPECT_EQ(d.block_shape(), (bl::Shape{32, 16}));
              EXPECT_EQ(d.dtype(), bl::float16);
              EXPECT_EQ(d.shape(0).type().str(), "i64");
              EXPECT_EQ(d.stride(0).type().str(), "i64");
              Tensor tile = bl::load(d, {bl::program_id(0) * 32, -3});
              EXPECT_EQ(tile.type().str(), "tensor<32x16xf16>");
              bl::store(d, {0, 16}, tile * 2);
            });
  EXPECT_EQ(count_ops(*fn, OpCode::Load), 0);
  EXPECT_EQ(count_ops(*fn, OpCode::Store), 0);
  blocc::ir::Operation *load = find_op(*fn, OpCode::DescriptorLoad);
  ASSERT_NE(load, nullptr);
  blocc::ir::DescriptorOperands d(*load);
  EXPECT_FALSE(d.is_store());
  ASSERT_EQ(d.rank(), 2);
  EXPECT_EQ(d.base(), fn->argument(0));
  EXPECT_EQ(d.shape(1), fn->argument(2)); // already int64: no cast
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(d.shape(i)->type().str(), "i64");
    EXPECT_EQ(d.stride(i)->type().str(), "i64");
    EXPECT_EQ(d.offset(i)->type().str(), "i32");
  }
  EXPECT_EQ(d.tile_type().str(), "tensor<32x16xf16>");
  EXPECT_EQ(load->loc().file, "tensor_descriptor_test.cpp");
  blocc::ir::Operation *store = find_op(*fn, OpCode::DescriptorStore);
  ASSERT_NE(store, nullptr);
  blocc::ir::DescriptorOperands s(*store);
  EXPECT_TRUE(s.is_store());
  EXPECT_EQ(s.rank(), 2);
  EXPECT_EQ(s.value()->type().str(), "tensor<32x16xf16>");
  EXPECT_EQ(s.stride(0), d.stride(0)); // one descriptor, the same values
}

TEST(TensorDescriptor, TheRewriteBuildsInt64AddressesAndAFullMask) {
  auto fn = trace(
      {pointer(Scalar::F32), scalar(Scalar::I32), scalar(Scalar::I32),
       pointer(Scalar::F32)},
      [](const Args &a) {
        Tensor x(a[0]), m(a[1]), n(a[2]), y(a[3]);
        auto from = bl::make_tensor_descriptor(x, {m, n}, {n, 1}, {16, 8});
        auto to = bl::make_tensor_descriptor(y, {m, n}, {n, 1}, {16, 8});
        bl::store(to, {0, 8}, bl::load(from, {0, 8}));
      });
  blocc::ir::rewrite_tensor_descriptors(*fn);
  blocc::ir::verify(*fn);
  EXPECT_EQ(count_ops(*fn, OpCode::DescriptorLoad), 0);
  EXPECT_EQ(count_ops(*fn, OpCode::DescriptorStore), 0);
  // Both dimensions checked, from below and above, for each access.
  EXPECT_EQ(count_ops(*fn, OpCode::Cmp), 8);
  blocc::ir::Operation *load = find_op(*fn, OpCode::Load);
  ASSERT_NE(load, nullptr);
  ASSERT_EQ(load->num_operands(), 2u); // pointers and mask: zero fill
  EXPECT_EQ(load->operand(1)->type().str(), "tensor<16x8xi1>");
  blocc::ir::Operation *addptr = load->operand(0)->defining_op();
  ASSERT_NE(addptr, nullptr);
  EXPECT_EQ(addptr->code(), OpCode::AddPtr);
  EXPECT_EQ(addptr->operand(1)->type().str(), "tensor<16x8xi64>");
  EXPECT_EQ(load->loc().file, "tensor_descriptor_test.cpp");
  blocc::ir::Operation *store = find_op(*fn, OpCode::Store);
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->num_operands(), 3u);
  EXPECT_EQ(store->operand(1), load->result());
}

TEST(TensorDescriptor, AUnitStrideArgumentTracesAsOneAndFoldsAway) {
  // A launch traces an integer argument equal to 1 as the constant 1: the
  // descriptor accepts it as its last stride. The default pipeline keeps
  // the accesses whole (backends lower them), and the stride's
  // multiplication is gone once they are rewritten.
  auto k = bl::kernel("unit_stride", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                        bl::i32 n, bl::i32 stride) {
    auto from = bl::make_tensor_descriptor(x, {n}, {stride}, {32});
    auto to = bl::make_tensor_descriptor(y, {n}, {1}, {32});
    bl::store(to, {0}, bl::load(from, {0}));
  });
  std::vector<float> x = random_floats(20), y = poisoned(20);
  k[{1}](x, y, 20, 1);
  EXPECT_EQ(x, y);
  std::string ir = k.ir_for(x, y, 20, 1);
  EXPECT_THAT(ir, HasSubstr("descriptor_load"));
  EXPECT_THAT(ir, HasSubstr("descriptor_store"));
  std::unique_ptr<blocc::ir::Function> plain = rewritten(
      k.specialize({blocc::detail::to_arg(x), blocc::detail::to_arg(y),
                    blocc::detail::to_arg(20), blocc::detail::to_arg(1)}));
  std::string rewritten_ir = blocc::ir::print(*plain);
  EXPECT_THAT(rewritten_ir, Not(HasSubstr("descriptor_load")));
  EXPECT_THAT(rewritten_ir, Not(HasSubstr("descriptor_store")));
  EXPECT_THAT(rewritten_ir, Not(HasSubstr("mul")));
}

TEST(TensorDescriptor, AUnitStrideReadInALoopBodyCountsAsOne) {
  // In a bl::range body every variable is the loop's tentative argument
  // until the body ends; a unit stride the loop leaves alone is still the
  // constant 1 there (a persistent kernel makes its descriptors per tile).
  auto k =
      bl::kernel("unit_stride_in_loop", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                           bl::i32 n, bl::i32 stride) {
        for (auto i : bl::range(0, 2, 1)) {
          auto from = bl::make_tensor_descriptor(x, {n}, {stride}, {16});
          auto to = bl::make_tensor_descriptor(y, {n}, {stride}, {16});
          bl::store(to, {i * 16}, bl::load(from, {i * 16}));
        }
      });
  std::vector<float> x = random_floats(20), y = poisoned(20);
  k[{1}](x, y, 20, 1);
  EXPECT_EQ(x, y);
  std::unique_ptr<blocc::ir::Function> plain = rewritten(
      k.specialize({blocc::detail::to_arg(x), blocc::detail::to_arg(y),
                    blocc::detail::to_arg(20), blocc::detail::to_arg(1)}));
  // The stride argument (%arg3) is used nowhere: the unit stride folded.
  std::string text = blocc::ir::print(*plain);
  EXPECT_EQ(text.find("%arg3", text.find("%arg3") + 1), std::string::npos)
      << text;
}

// ------------------------------------- the rewrite against the interpreter

/// The traced kernel run directly by the interpreter and after the default
/// pipeline, on the same inputs; the outputs must agree bit for bit (and
/// `check` says what they must be).
void expect_rewrite_matches(
    const blocc::ir::Function &traced, blocc::Grid grid,
    const std::vector<float> &input, size_t output_size,
    const std::vector<KernelArg> &scalars,
    const std::function<void(const std::vector<float> &)> &check) {
  ASSERT_GT(count_ops(traced, OpCode::DescriptorLoad), 0);
  std::unique_ptr<blocc::ir::Function> plain = rewritten(traced);
  ASSERT_EQ(count_ops(*plain, OpCode::DescriptorLoad), 0);
  std::vector<float> in = input;
  std::vector<float> direct = poisoned(output_size),
                     through_pass = poisoned(output_size);
  auto run = [&](const blocc::ir::Function &fn, std::vector<float> &out) {
    std::vector<KernelArg> args{buffer(in), buffer(out)};
    args.insert(args.end(), scalars.begin(), scalars.end());
    blocc::interp::interpret(fn, grid, args);
  };
  run(traced, direct);
  run(*plain, through_pass);
  EXPECT_TRUE(same_bits(direct, through_pass)) << blocc::ir::print(*plain);
  check(direct);
}

/// out[i, j] = 2 * in[i - dr, j - dc] (0 outside `in`) over an m x n
/// output, tile by tile: the load's offsets are shifted by (-dr, -dc), so
/// tiles read across every edge of the input.
std::unique_ptr<blocc::ir::Function> shifted_copy_kernel(int64_t bm,
                                                         int64_t bn) {
  return trace(
      {pointer(Scalar::F32), pointer(Scalar::F32), scalar(Scalar::I32),
       scalar(Scalar::I32), scalar(Scalar::I32), scalar(Scalar::I32),
       scalar(Scalar::I32), scalar(Scalar::I32)},
      [&](const Args &a) {
        Tensor src(a[0]), dst(a[1]), m(a[2]), n(a[3]), ld(a[4]), ldd(a[5]),
            dr(a[6]), dc(a[7]);
        Tensor row = bl::program_id(0) * bm, col = bl::program_id(1) * bn;
        auto from = bl::make_tensor_descriptor(src, {m, n}, {ld, 1}, {bm, bn});
        auto to = bl::make_tensor_descriptor(dst, {m, n}, {ldd, 1}, {bm, bn});
        Tensor tile = bl::load(from, {row - dr, col - dc});
        bl::store(to, {row, col}, tile * 2.0f);
      });
}

TEST(TensorDescriptor, ShiftedTilesOfOddSizesMatchTheRewrite) {
  BLOCC_SEED_TRACE();
  const int bm = 16, bn = 8;
  auto fn = shifted_copy_kernel(bm, bn);
  for (auto [m, n, dr, dc] :
       {std::tuple{37, 21, 0, 0}, std::tuple{37, 21, 5, -3},
        std::tuple{1, 1, 0, 0}, std::tuple{16, 8, -20, 9},
        std::tuple{50, 13, 3, 13}}) {
    int ld = n + 3, ldd = n + 5;
    // Sized exactly: the last row holds only n elements.
    std::vector<float> src =
        random_floats(static_cast<size_t>((m - 1) * ld + n));
    size_t out_size = static_cast<size_t>((m - 1) * ldd + n);
    expect_rewrite_matches(
        *fn, blocc::Grid(bl::cdiv(m, bm), bl::cdiv(n, bn)), src, out_size,
        {KernelArg::of_int(m), KernelArg::of_int(n), KernelArg::of_int(ld),
         KernelArg::of_int(ldd), KernelArg::of_int(dr), KernelArg::of_int(dc)},
        [&](const std::vector<float> &out) {
          std::vector<float> fresh = poisoned(1);
          for (int i = 0; i < m; ++i)
            for (int j = 0;
                 j < ldd && static_cast<size_t>(i * ldd + j) < out.size();
                 ++j) {
              float got = out[i * ldd + j];
              if (j >= n) { // the padding between rows stays untouched
                ASSERT_EQ(std::memcmp(&got, fresh.data(), 4), 0);
                continue;
              }
              int si = i - dr, sj = j - dc;
              bool inside = si >= 0 && si < m && sj >= 0 && sj < n;
              ASSERT_EQ(got, inside ? 2.0f * src[si * ld + sj] : 0.0f)
                  << m << "x" << n << " shifted by (" << dr << ", " << dc
                  << ") at (" << i << ", " << j << ")";
            }
        });
  }
}

TEST(TensorDescriptor, ThreeDimensionalTilesMatchTheRewrite) {
  BLOCC_SEED_TRACE();
  // A [d0, d1, d2] array with padded strides, copied to a dense one by
  // 2 x 4 x 8 tiles; the tile at the end of every dimension is partial.
  const int d0 = 3, d1 = 7, d2 = 11, s1 = 13, s0 = 13 * 9;
  auto fn =
      trace({pointer(Scalar::F32), pointer(Scalar::F32)}, [&](const Args &a) {
        Tensor src(a[0]), dst(a[1]);
        auto from = bl::make_tensor_descriptor(src, {d0, d1, d2}, {s0, s1, 1},
                                               {2, 4, 8});
        auto to = bl::make_tensor_descriptor(dst, {d0, d1, d2},
                                             {d1 * d2, d2, 1}, {2, 4, 8});
        Tensor i = bl::program_id(0) * 2, j = bl::program_id(1) * 4,
               k = bl::program_id(2) * 8;
        bl::store(to, {i, j, k}, bl::load(from, {i, j, k}));
      });
  std::vector<float> src =
      random_floats(static_cast<size_t>((d0 - 1) * s0 + (d1 - 1) * s1 + d2));
  expect_rewrite_matches(
      *fn, blocc::Grid(bl::cdiv(d0, 2), bl::cdiv(d1, 4), bl::cdiv(d2, 8)), src,
      static_cast<size_t>(d0 * d1 * d2), {},
      [&](const std::vector<float> &out) {
        for (int i = 0; i < d0; ++i)
          for (int j = 0; j < d1; ++j)
            for (int k = 0; k < d2; ++k)
              ASSERT_EQ(out[(i * d1 + j) * d2 + k], src[i * s0 + j * s1 + k])
                  << "(" << i << ", " << j << ", " << k << ")";
      });
}

TEST(TensorDescriptor, CarriedThroughRangeAndIf) {
  BLOCC_SEED_TRACE();
  // out[j] = sum over rows r < m of in[r, j], read through a descriptor
  // re-made in the loop for each row (its base moves); then an if_ picks
  // row 0 or row m for out[n + j] = picked[j - 3] (0 for j < 3).
  const int m = 5, n = 21;
  auto fn = trace(
      {pointer(Scalar::F32), pointer(Scalar::F32), scalar(Scalar::I32)},
      [&](const Args &a) {
        Tensor src(a[0]), dst(a[1]), flag(a[2]);
        auto row = bl::make_tensor_descriptor(src, {n}, {1}, {32});
        Tensor acc = bl::zeros({32}, bl::float32);
        for (auto r : bl::range(0, m)) {
          acc += bl::load(row, {0});
          row = bl::make_tensor_descriptor(src + (r + 1) * n, {n}, {1}, {32});
        }
        auto out = bl::make_tensor_descriptor(dst, {n}, {1}, {32});
        bl::store(out, {0}, acc);
        auto picked = bl::make_tensor_descriptor(src, {n}, {1}, {32});
        bl::if_(flag != 0, [&] { picked = row; });
        auto tail = bl::make_tensor_descriptor(dst + n, {n}, {1}, {32});
        bl::store(tail, {0}, bl::load(picked, {-3}));
      });
  std::vector<float> src = random_floats(static_cast<size_t>((m + 1) * n));
  for (int flag : {0, 1}) {
    expect_rewrite_matches(
        *fn, blocc::Grid(1), src, static_cast<size_t>(2 * n),
        {KernelArg::of_int(flag)}, [&](const std::vector<float> &out) {
          for (int j = 0; j < n; ++j) {
            float want = 0.0f;
            for (int r = 0; r < m; ++r)
              want += src[r * n + j];
            ASSERT_EQ(out[j], want) << j;
            float picked = j < 3 ? 0.0f : src[(flag ? m * n : 0) + j - 3];
            ASSERT_EQ(out[n + j], picked) << "flag " << flag << ", " << j;
          }
        });
  }
}

TEST(TensorDescriptor, StoreConvertsTheValueToTheElementType) {
  auto fn = trace({pointer(Scalar::F16)}, [](const Args &a) {
    Tensor y(a[0]);
    auto d = bl::make_tensor_descriptor(y, {2, 10}, {10, 1}, {2, 16});
    bl::store(d, {0, 0}, bl::full({2, 16}, 1.5, bl::float32));
  });
  blocc::ir::Operation *store = find_op(*fn, OpCode::DescriptorStore);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(blocc::ir::DescriptorOperands(*store).value()->type().str(),
            "tensor<2x16xf16>");
  std::vector<bl::half> y(20, bl::half(0.0f));
  blocc::interp::interpret(*fn, blocc::Grid(1), {buffer(y)});
  for (const bl::half &h : y)
    EXPECT_EQ(static_cast<float>(h), 1.5f);
}

// --------------------------------------------------------------- errors

const std::vector<Type> kPtrAndInt = {pointer(Scalar::F32),
                                      scalar(Scalar::I32)};

TEST(TensorDescriptorErrors, RankMismatchAndRankLimits) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {n, n}, {1}, {16, 16});
  });
  EXPECT_THAT(m, HasSubstr("tensor_descriptor_test.cpp:"));
  EXPECT_THAT(m, HasSubstr("bl::make_tensor_descriptor: rank mismatch: shape "
                           "has 2 entries, strides 1 and block_shape 2; give "
                           "each one entry per dimension"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {n, n, n, n}, {n, n, n, 1}, {2, 2, 2, 16});
  });
  EXPECT_THAT(m, HasSubstr("block_shape [2, 2, 2, 16] has 4 dimensions; a "
                           "tensor descriptor has 1 to 3"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto d = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
    bl::load(d, {0});
  });
  EXPECT_THAT(m, HasSubstr("bl::load: 1 offsets for a tensor descriptor of "
                           "rank 2; give one offset per dimension"));
}

TEST(TensorDescriptorErrors, LastStrideMustBeOne) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {n, n}, {1, n}, {16, 16});
  });
  EXPECT_THAT(m, HasSubstr("bl::make_tensor_descriptor: strides[1], the last "
                           "stride, must be 1, got "));
  EXPECT_THAT(m, HasSubstr("(not known to be 1 when tracing)"));
  EXPECT_THAT(m, HasSubstr("for other layouts use bl::make_block_ptr"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {n}, {2}, {16});
  });
  EXPECT_THAT(m,
              HasSubstr("strides[0], the last stride, must be 1, got integer "
                        "constant 2;"));
}

TEST(TensorDescriptorErrors, BlockShapeRules) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {12, 16});
  });
  EXPECT_THAT(m, HasSubstr("block_shape [12, 16] has dimension 0 of size 12, "
                           "which is not a power of two"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 2});
  });
  EXPECT_THAT(m, HasSubstr("block_shape [16, 2] has a last dimension of 2 "
                           "f32 elements (8 bytes); a tensor descriptor's "
                           "rows are at least 16 bytes, as in Triton (the "
                           "TMA's smallest): use 4 or more"));
}

TEST(TensorDescriptorErrors, BaseShapeAndStridesAreScalarsOfTheRightKind) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x + bl::arange(0, 16), {n}, {1}, {16});
  });
  EXPECT_THAT(m, HasSubstr("bl::make_tensor_descriptor: base must be a "
                           "pointer (such as a bl::Ptr<T> kernel argument)"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {bl::arange(0, 16)}, {1}, {16});
  });
  EXPECT_THAT(m, HasSubstr("shape[0] must be a scalar, got "));
  EXPECT_THAT(m, HasSubstr("a tensor descriptor has one extent, stride and "
                           "offset per dimension"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    bl::make_tensor_descriptor(x, {n, n}, {2.5, 1}, {16, 16});
  });
  EXPECT_THAT(m, HasSubstr("strides[0] must be an integer, got "));
}

TEST(TensorDescriptorErrors, OffsetsAre32BitIntegers) {
  std::string m = trace_error(
      {pointer(Scalar::F32), scalar(Scalar::I64)}, [](const Args &a) {
        Tensor x(a[0]), big(a[1]);
        auto d = bl::make_tensor_descriptor(x, {big}, {1}, {16});
        bl::load(d, {big});
      });
  EXPECT_THAT(m, HasSubstr("bl::load: offsets[0] is "));
  EXPECT_THAT(m, HasSubstr("tensor descriptor offsets are 32-bit, as in "
                           "Triton: convert it with bl::cast(x, bl::int32)"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto d = bl::make_tensor_descriptor(x, {n}, {1}, {16});
    bl::store(d, {int64_t{1} << 40}, bl::zeros({16}, bl::float32));
  });
  EXPECT_THAT(m, HasSubstr("bl::store: offsets[0] 1099511627776 does not fit "
                           "in int32; tensor descriptor offsets are 32-bit"));
}

TEST(TensorDescriptorErrors, StoredValueHasExactlyTheBlockShape) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto d = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
    bl::store(d, {0, 0}, bl::zeros({16}, bl::float32));
  });
  EXPECT_THAT(m, HasSubstr("bl::store: the value is "));
  EXPECT_THAT(m, HasSubstr("but the tensor descriptor's block is [16, 16]; "
                           "store a block of exactly that shape"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto d = bl::make_tensor_descriptor(x, {n}, {1}, {16});
    bl::store(d, {0}, 1.0f); // a scalar is not broadcast, as in Triton
  });
  EXPECT_THAT(m, HasSubstr("but the tensor descriptor's block is [16]"));
}

TEST(TensorDescriptorErrors, AssignmentKeepsTheTile) {
  std::string m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto d = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 16});
    d = bl::make_tensor_descriptor(x, {n, n}, {n, 1}, {16, 32});
  });
  EXPECT_THAT(m, HasSubstr("cannot assign a tensor descriptor of a block "
                           "[16, 32] of f32 to a variable that holds one of a "
                           "block [16, 16] of f32"));
}

TEST(TensorDescriptorErrors, EmptyDescriptorsAndCombines) {
  std::string m = trace_error(kPtrAndInt, [](const Args &) {
    bl::TensorDescriptor d;
    bl::load(d, {0});
  });
  EXPECT_THAT(m, HasSubstr("bl::load: this tensor descriptor is empty; assign "
                           "it from bl::make_tensor_descriptor first"));
  m = trace_error(kPtrAndInt, [](const Args &a) {
    Tensor x(a[0]), n(a[1]);
    auto d = bl::make_tensor_descriptor(x, {n}, {1}, {16});
    bl::reduce(bl::arange(0, 16), 0, [&](Tensor l, Tensor r) {
      bl::store(d, {0}, bl::zeros({16}, bl::float32));
      return l + r;
    });
  });
  EXPECT_THAT(m, HasSubstr("bl::store"));
  EXPECT_THAT(m, HasSubstr("combine"));
}

} // namespace
