// Reductions, scans, dot and the shape ops in the reference interpreter.
// Sums are checked bit for bit against a host loop in the interpreter's
// documented order (sequential along the axis) and dot also against a
// float64 reference with a tolerance.
#include "backends/interpreter/interpreter.h"
#include "backends/interpreter/testing/kernel_builder.h"
#include "ir/error.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace blocc::interp {
namespace {

using namespace testing;

template <typename T> KernelArg buffer_arg(std::vector<T> &v) {
  return KernelArg::of_pointer(v.data(), v.size() * sizeof(T));
}

/// Row-major flat offsets of a block of `shape`: offsets[i, j, ...] is the
/// position of (i, j, ...) in a dense buffer.
Value *flat_offsets(KernelBuilder &k, const Shape &shape) {
  int rank = static_cast<int>(shape.size());
  Value *total = nullptr;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    Value *index = k.arange(0, shape[d]);
    for (int before = 0; before < d; ++before)
      index = k.expand_dims(index, 0);
    for (int after = d + 1; after < rank; ++after)
      index = k.expand_dims(index, after);
    index = k.broadcast(index, shape);
    Value *term =
        k.binary(OpCode::Mul, index, k.int_const(stride, Scalar::I32, shape));
    total = total ? k.binary(OpCode::Add, total, term) : term;
    stride *= shape[d];
  }
  return total;
}

Value *load_block(KernelBuilder &k, Value *base, const Shape &shape) {
  return k.load(k.pointers(base, flat_offsets(k, shape)));
}
void store_block(KernelBuilder &k, Value *base, Value *v) {
  Shape shape = v->type().shape();
  if (shape.empty())
    k.store(base, v);
  else
    k.store(k.pointers(base, flat_offsets(k, shape)), v);
}

std::vector<float> random_floats(size_t n, unsigned seed, float lo = -1,
                                 float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

// ------------------------------------------------------------- reduce

TEST(InterpreterCollective, SumAlongEachAxisInIndexOrder) {
  const int64_t rows = 8, cols = 16;
  for (int axis : {0, 1}) {
    KernelBuilder k("sum");
    Value *in = k.ptr_arg(Scalar::F32, "in");
    Value *out = k.ptr_arg(Scalar::F32, "out");
    store_block(k, out, k.sum(load_block(k, in, {rows, cols}), axis));
    const ir::Function &f = k.finish();
    std::vector<float> x = random_floats(rows * cols, 11 + axis, -100, 100);
    std::vector<float> o(axis == 0 ? cols : rows,
                         std::numeric_limits<float>::quiet_NaN());
    interpret(f, Grid(1), {buffer_arg(x), buffer_arg(o)});
    for (size_t i = 0; i < o.size(); ++i) {
      float acc = axis == 0 ? x[i] : x[i * cols];
      for (int64_t j = 1; j < (axis == 0 ? rows : cols); ++j)
        acc += axis == 0 ? x[j * cols + i] : x[i * cols + j];
      EXPECT_EQ(o[i], acc) << "axis " << axis << " position " << i;
    }
  }
}

TEST(InterpreterCollective, ReduceWithoutAxisFoldsTheWholeBlock) {
  KernelBuilder k("total");
  Value *in = k.ptr_arg(Scalar::I32, "in");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  Value *x = load_block(k, in, {4, 8});
  ir::Operation *op =
      k.builder().create(OpCode::Reduce, {x}, {scalar_type(Scalar::I32)});
  ir::Block *region = op->add_region();
  Value *l = region->add_argument(scalar_type(Scalar::I32));
  Value *r = region->add_argument(scalar_type(Scalar::I32));
  // Not commutative on purpose: 2 * l + r exposes the fold order.
  k.inside(region, [&] {
    k.yield(
        {k.binary(OpCode::Add,
                  k.binary(OpCode::Mul, l, k.int_const(2, Scalar::I32)), r)});
  });
  k.store(out, op->result(0));
  const ir::Function &f = k.finish();
  std::vector<int32_t> xs(32), o(1, -1);
  for (int i = 0; i < 32; ++i)
    xs[i] = (i * 7) % 5 - 2;
  interpret(f, Grid(1), {buffer_arg(xs), buffer_arg(o)});
  uint32_t acc = static_cast<uint32_t>(xs[0]);
  for (int i = 1; i < 32; ++i)
    acc = acc * 2 + static_cast<uint32_t>(xs[i]); // wraps like i32
  EXPECT_EQ(o[0], static_cast<int32_t>(acc));
}

TEST(InterpreterCollective, ArgmaxStyleTwoOperandReduce) {
  const int64_t rows = 4, cols = 32;
  KernelBuilder k("argmax");
  Value *in = k.ptr_arg(Scalar::F32, "in");
  Value *values_out = k.ptr_arg(Scalar::F32, "values");
  Value *index_out = k.ptr_arg(Scalar::I32, "index");
  Value *x = load_block(k, in, {rows, cols});
  Value *index = k.broadcast(k.expand_dims(k.arange(0, cols), 0), {rows, cols});
  std::vector<Value *> results = k.reduce({x, index}, 1, [&](auto &l, auto &r) {
    // Take the right one when it is larger, or equal with a smaller index.
    Value *greater = k.cmp("gt", r[0], l[0]);
    Value *tie =
        k.binary(OpCode::And, k.cmp("eq", r[0], l[0]), k.cmp("lt", r[1], l[1]));
    Value *take_right = k.binary(OpCode::Or, greater, tie);
    return std::vector<Value *>{k.select(take_right, r[0], l[0]),
                                k.select(take_right, r[1], l[1])};
  });
  store_block(k, values_out, results[0]);
  store_block(k, index_out, results[1]);
  const ir::Function &f = k.finish();
  std::mt19937 rng(3);
  std::vector<float> xs(rows * cols);
  for (float &v : xs)
    v = static_cast<float>(rng() % 6); // many ties
  std::vector<float> best(rows, -1);
  std::vector<int32_t> where(rows, -1);
  interpret(f, Grid(1), {buffer_arg(xs), buffer_arg(best), buffer_arg(where)});
  for (int64_t r = 0; r < rows; ++r) {
    auto row = xs.begin() + r * cols;
    auto first_max = std::max_element(row, row + cols); // first of the largest
    EXPECT_EQ(best[r], *first_max);
    EXPECT_EQ(where[r], first_max - row);
  }
}

// --------------------------------------------------------------- scan

TEST(InterpreterCollective, InclusiveScanForwardAndReverseAlongEitherAxis) {
  const int64_t rows = 4, cols = 8;
  std::vector<int32_t> xs(rows * cols);
  std::mt19937 rng(8);
  for (int32_t &v : xs)
    v = static_cast<int32_t>(rng() % 100) - 50;
  for (int axis : {0, 1})
    for (bool reverse : {false, true}) {
      KernelBuilder k("cumsum");
      Value *in = k.ptr_arg(Scalar::I32, "in");
      Value *out = k.ptr_arg(Scalar::I32, "out");
      Value *x = load_block(k, in, {rows, cols});
      Value *scanned = k.reduce(
          {x}, axis,
          [&](auto &l, auto &r) {
            return std::vector<Value *>{k.binary(OpCode::Add, l[0], r[0])};
          },
          /*scan=*/true, reverse)[0];
      store_block(k, out, scanned);
      const ir::Function &f = k.finish();
      std::vector<int32_t> o(rows * cols, -777);
      interpret(f, Grid(1), {buffer_arg(xs), buffer_arg(o)});
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          int32_t expected = 0;
          for (int64_t t = 0; t < (axis == 0 ? rows : cols); ++t) {
            int64_t here = axis == 0 ? r : c;
            if (reverse ? t >= here : t <= here)
              expected += axis == 0 ? xs[t * cols + c] : xs[r * cols + t];
          }
          ASSERT_EQ(o[r * cols + c], expected)
              << "axis " << axis << " reverse " << reverse << " at " << r << ","
              << c;
        }
    }
}

TEST(InterpreterCollective, CumprodInFloatIsSequential) {
  KernelBuilder k("cumprod");
  Value *in = k.ptr_arg(Scalar::F32, "in");
  Value *out = k.ptr_arg(Scalar::F32, "out");
  Value *x = load_block(k, in, {64});
  store_block(k, out,
              k.reduce(
                  {x}, 0,
                  [&](auto &l, auto &r) {
                    return std::vector<Value *>{
                        k.binary(OpCode::Mul, l[0], r[0])};
                  },
                  true)[0]);
  const ir::Function &f = k.finish();
  std::vector<float> xs = random_floats(64, 21, 0.5f, 1.5f), o(64, -1);
  interpret(f, Grid(1), {buffer_arg(xs), buffer_arg(o)});
  float acc = 1;
  for (int i = 0; i < 64; ++i) {
    acc = i == 0 ? xs[0] : acc * xs[i];
    ASSERT_EQ(o[i], acc) << i;
  }
}

// ---------------------------------------------------------------- dot

struct DotCase {
  Scalar input;
  Scalar acc;
};

/// Host storage of a random input element and its exact value.
struct HostMatrix {
  std::vector<unsigned char> bytes;
  std::vector<double> values;
};

HostMatrix random_matrix(Scalar s, int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  HostMatrix m;
  for (int64_t i = 0; i < n; ++i) {
    float f = std::uniform_real_distribution<float>(-2, 2)(rng);
    switch (s) {
    case Scalar::F32: {
      m.values.push_back(f);
      auto b = std::bit_cast<std::array<unsigned char, 4>>(f);
      m.bytes.insert(m.bytes.end(), b.begin(), b.end());
      break;
    }
    case Scalar::BF16: {
      // Truncation keeps this exact and independent of the rounding code.
      uint16_t bits = static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
      m.values.push_back(std::bit_cast<float>(uint32_t{bits} << 16));
      m.bytes.push_back(bits & 0xff);
      m.bytes.push_back(bits >> 8);
      break;
    }
    case Scalar::F16: {
      // Multiples of 1/256 in [-2, 2] are exact halves.
      int q = static_cast<int>(std::lround(f * 256));
      double v = q / 256.0;
      m.values.push_back(v);
      uint16_t bits = 0;
      if (q != 0) {
        int e = std::ilogb(v);
        uint16_t mantissa = static_cast<uint16_t>(
            std::lround(std::ldexp(std::fabs(v), 10 - e)) - 1024);
        bits = static_cast<uint16_t>(((e + 15) << 10) | mantissa |
                                     (v < 0 ? 0x8000 : 0));
      }
      m.bytes.push_back(bits & 0xff);
      m.bytes.push_back(bits >> 8);
      break;
    }
    case Scalar::I8: {
      int8_t v = static_cast<int8_t>(rng());
      m.values.push_back(v);
      m.bytes.push_back(static_cast<unsigned char>(v));
      break;
    }
    default:
      ADD_FAILURE() << "no host matrix for " << ir::scalar_name(s);
    }
  }
  return m;
}

void check_dot(DotCase c, const Shape &a_shape, const Shape &b_shape) {
  bool batched = a_shape.size() == 3;
  int64_t batch = batched ? a_shape[0] : 1;
  int64_t m = a_shape[a_shape.size() - 2], kdim = a_shape.back(),
          n = b_shape.back();
  Shape acc_shape = batched ? Shape{batch, m, n} : Shape{m, n};
  KernelBuilder k("dot");
  Value *a_ptr = k.ptr_arg(c.input, "a");
  Value *b_ptr = k.ptr_arg(c.input, "b");
  Value *acc_ptr = k.ptr_arg(c.acc, "acc");
  Value *out_ptr = k.ptr_arg(c.acc, "out");
  Value *result =
      k.dot(load_block(k, a_ptr, a_shape), load_block(k, b_ptr, b_shape),
            load_block(k, acc_ptr, acc_shape));
  store_block(k, out_ptr, result);
  const ir::Function &f = k.finish();

  HostMatrix a = random_matrix(c.input, batch * m * kdim, 1);
  HostMatrix b = random_matrix(c.input, batch * kdim * n, 2);
  bool integer = c.acc == Scalar::I32;
  std::vector<float> accf = random_floats(batch * m * n, 3, -10, 10);
  std::vector<int32_t> acci(batch * m * n);
  for (size_t i = 0; i < acci.size(); ++i)
    acci[i] = static_cast<int32_t>(i % 13) - 6;
  std::vector<float> outf(batch * m * n,
                          std::numeric_limits<float>::quiet_NaN());
  std::vector<int32_t> outi(batch * m * n, 0x7eadbeef);
  interpret(f, Grid(1),
            {KernelArg::of_pointer(a.bytes.data(), a.bytes.size()),
             KernelArg::of_pointer(b.bytes.data(), b.bytes.size()),
             integer ? buffer_arg(acci) : buffer_arg(accf),
             integer ? buffer_arg(outi) : buffer_arg(outf)});
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t lane = (p * m + i) * n + j;
        double exact = integer ? acci[lane] : accf[lane],
               magnitude = std::fabs(exact);
        float sequential = accf[lane];
        for (int64_t q = 0; q < kdim; ++q) {
          double x = a.values[(p * m + i) * kdim + q],
                 y = b.values[(p * kdim + q) * n + j];
          exact += x * y;
          magnitude += std::fabs(x * y);
          sequential = std::fma(static_cast<float>(x), static_cast<float>(y),
                                sequential);
        }
        if (integer) {
          ASSERT_EQ(outi[lane], static_cast<int32_t>(exact)) << lane;
        } else {
          // Against float64: the f32 accumulation error bound.
          ASSERT_NEAR(outf[lane], exact, 1e-6 * kdim * magnitude + 1e-6)
              << lane;
          // And bit for bit against the documented order: fma per k.
          ASSERT_EQ(outf[lane], sequential) << lane;
        }
      }
}

TEST(InterpreterCollective, DotF16InputsF32Accumulator) {
  check_dot({Scalar::F16, Scalar::F32}, {16, 32}, {32, 8});
}
TEST(InterpreterCollective, DotBF16InputsF32Accumulator) {
  check_dot({Scalar::BF16, Scalar::F32}, {8, 16}, {16, 16});
}
TEST(InterpreterCollective, DotF32) {
  check_dot({Scalar::F32, Scalar::F32}, {32, 64}, {64, 16});
}
TEST(InterpreterCollective, DotInt8IntoInt32) {
  check_dot({Scalar::I8, Scalar::I32}, {16, 64}, {64, 16});
}
TEST(InterpreterCollective, DotBatched) {
  check_dot({Scalar::F32, Scalar::F32}, {2, 4, 8}, {2, 8, 4});
}

TEST(InterpreterCollective, DotRejectsMismatchedShapes) {
  KernelBuilder k("baddot");
  Value *a = k.float_const(1, Scalar::F32, {4, 8});
  Value *b = k.float_const(1, Scalar::F32, {4, 8});
  Value *acc = k.float_const(0, Scalar::F32, {4, 8});
  k.at_line(9);
  k.dot(a, b, acc);
  const ir::Function &f = k.finish();
  try {
    interpret(f, Grid(1), {});
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    std::string m = e.what();
    EXPECT_NE(
        m.find("dot at kernel_test.cpp:9: cannot multiply tensor<4x8xf32> by "
               "tensor<4x8xf32>"),
        std::string::npos)
        << m;
  }
}

// ---------------------------------------------------------- shape ops

/// Runs a kernel that loads a block of `in_shape` from 0, 1, 2, ... and
/// stores `transform(block)` densely; returns what it stored.
std::vector<int32_t>
transformed(const Shape &in_shape,
            const std::function<Value *(KernelBuilder &, Value *)> &transform) {
  KernelBuilder k("shape");
  Value *in = k.ptr_arg(Scalar::I32, "in");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  Value *result = transform(k, load_block(k, in, in_shape));
  store_block(k, out, result);
  const ir::Function &f = k.finish();
  int64_t n = 1;
  for (int64_t d : in_shape)
    n *= d;
  std::vector<int32_t> xs(n);
  std::iota(xs.begin(), xs.end(), 0);
  std::vector<int32_t> o(result->type().num_elements(), -1);
  interpret(f, Grid(1), {buffer_arg(xs), buffer_arg(o)});
  return o;
}

TEST(InterpreterCollective, PermuteMovesDimensions) {
  std::vector<int32_t> t = transformed({4, 8}, [](KernelBuilder &k, Value *x) {
    return k.permute(x, {1, 0});
  });
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      ASSERT_EQ(t[i * 4 + j], j * 8 + i);
  // Result dim i is operand dim order[i]: [2, 4, 8] by (2, 0, 1) is [8, 2, 4].
  std::vector<int32_t> p =
      transformed({2, 4, 8}, [](KernelBuilder &k, Value *x) {
        return k.permute(x, {2, 0, 1});
      });
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 4; ++c)
        ASSERT_EQ(p[(a * 2 + b) * 4 + c], (b * 4 + c) * 8 + a);
}

TEST(InterpreterCollective, ReshapeIsRowMajorAndBroadcastStretchesOnes) {
  std::vector<int32_t> r = transformed({4, 8}, [](KernelBuilder &k, Value *x) {
    return k.reshape(k.reshape(x, {32}), {8, 4});
  });
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(r[i], i);
  std::vector<int32_t> column =
      transformed({4, 1}, [](KernelBuilder &k, Value *x) {
        return k.broadcast(x, {4, 8});
      });
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j)
      ASSERT_EQ(column[i * 8 + j], i);
  std::vector<int32_t> row = transformed({8}, [](KernelBuilder &k, Value *x) {
    return k.broadcast(k.expand_dims(x, 0), {4, 8});
  });
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j)
      ASSERT_EQ(row[i * 8 + j], j);
}

TEST(InterpreterCollective, JoinSplitAndCat) {
  std::vector<int32_t> joined =
      transformed({8}, [](KernelBuilder &k, Value *x) {
        return k.join(
            x, k.binary(OpCode::Mul, x, k.int_const(-1, Scalar::I32, {8})));
      });
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(joined[2 * i], i);
    ASSERT_EQ(joined[2 * i + 1], -i);
  }
  // split(join(a, b)) gives a and b back; split of a reshape splits pairs.
  std::vector<int32_t> halves =
      transformed({16}, [](KernelBuilder &k, Value *x) {
        auto [even, odd] = k.split(k.reshape(x, {8, 2}));
        return k.cat(odd, even, 0);
      });
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(halves[i], 2 * i + 1);
    ASSERT_EQ(halves[8 + i], 2 * i);
  }
  std::vector<int32_t> wide = transformed({2, 4}, [](KernelBuilder &k,
                                                     Value *x) {
    return k.cat(
        x, k.binary(OpCode::Add, x, k.int_const(100, Scalar::I32, {2, 4})), 1);
  });
  EXPECT_EQ(wide, (std::vector<int32_t>{0, 1, 2, 3, 100, 101, 102, 103, 4, 5, 6,
                                        7, 104, 105, 106, 107}));
}

TEST(InterpreterCollective, HintsAreIdentity) {
  std::vector<int32_t> h = transformed({16}, [](KernelBuilder &k, Value *x) {
    Value *m = k.builder().create_value(OpCode::MultipleOf, {x}, x->type(),
                                        {{"values", std::vector<int64_t>{16}}});
    return k.builder().create_value(OpCode::MaxContiguous, {m}, x->type(),
                                    {{"values", std::vector<int64_t>{16}}});
  });
  for (int i = 0; i < 16; ++i)
    ASSERT_EQ(h[i], i);
}

} // namespace
} // namespace blocc::interp
