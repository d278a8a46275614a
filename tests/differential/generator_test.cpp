// The kernel generator: a seed names one kernel, and the fixed-seed batch
// covers what the differential tests promise to cover (so a change to the
// generator cannot quietly drop an op, a type or a shape of problem).
#include "fixed_batch.h"
#include "kernel_generator.h"

#include "ir/passes.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace blocc::differential {
namespace {

using ir::OpCode;
using ir::Scalar;

TEST(GeneratorTest, ASeedNamesOneKernel) {
  for (uint64_t seed : {1, 2, 99, 12345}) {
    GeneratedKernel a = generate_kernel(seed), b = generate_kernel(seed);
    EXPECT_EQ(ir::print(*a.function), ir::print(*b.function));
    EXPECT_EQ(a.grid.count(), b.grid.count());
    ASSERT_EQ(a.arguments.size(), b.arguments.size());
    for (size_t i = 0; i < a.arguments.size(); ++i) {
      EXPECT_EQ(a.arguments[i].name, b.arguments[i].name);
      EXPECT_EQ(a.arguments[i].value, b.arguments[i].value);
      EXPECT_EQ(a.arguments[i].buffer.elements, b.arguments[i].buffer.elements);
    }
  }
  EXPECT_NE(ir::print(*generate_kernel(1).function),
            ir::print(*generate_kernel(2).function));
}

TEST(GeneratorTest, ArgumentsDescribeTheFunction) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    GeneratedKernel k = generate_kernel(seed);
    ASSERT_NO_THROW(ir::verify(*k.function)) << "seed " << seed;
    ASSERT_EQ(k.arguments.size(), k.function->num_arguments());
    int outputs = 0;
    for (size_t i = 0; i < k.arguments.size(); ++i) {
      const ArgumentSpec &a = k.arguments[i];
      const ir::Type &t = k.function->argument(i)->type();
      EXPECT_EQ(a.name, k.function->argument_info(i).name);
      if (a.kind == ArgumentSpec::Kind::Buffer) {
        EXPECT_TRUE(t.is_pointer());
        EXPECT_EQ(t.pointee(), a.buffer.dtype);
        EXPECT_GE(a.buffer.elements, 1);
        outputs += a.buffer.is_output;
      } else {
        EXPECT_TRUE(t.is_integer());
      }
    }
    EXPECT_GE(outputs, 1) << "seed " << seed;
  }
}

/// What the combine region of reduce/scan `op` holds beyond one op.
void combine_features(ir::Operation &op, std::set<std::string> &features) {
  if (op.num_operands() == 3)
    features.insert("combine of three operands");
  op.walk([&](ir::Operation &inner) {
    if (inner.code() == OpCode::If)
      features.insert("combine with an if");
    if (inner.code() == OpCode::Div && inner.result()->type().is_integer())
      features.insert("combine dividing integers");
    if (inner.code() == OpCode::Rem && inner.result()->type().is_integer())
      features.insert("combine with a remainder");
  });
}

TEST(GeneratorTest, TheBatchCoversWhatItPromises) {
  std::map<OpCode, int> ops;
  std::set<Scalar> types;
  std::set<std::string> features;
  for (uint64_t seed = kFixedBatchFirstSeed;
       seed < kFixedBatchFirstSeed + kFixedBatchKernels; ++seed) {
    GeneratedKernel k = generate_kernel(seed);
    for (size_t i = 0; i < k.arguments.size(); ++i) {
      const ArgumentSpec &a = k.arguments[i];
      if (a.kind == ArgumentSpec::Kind::Int && a.name == "n") {
        int64_t n = a.value;
        features.insert(n == 1 ? "n = 1" : "n > 1");
        for (int64_t d = 2; d * d <= n; ++d)
          if (n % d == 0) {
            n = 0;
            break;
          }
        if (n > 2)
          features.insert("n an odd prime");
      }
      if (a.kind == ArgumentSpec::Kind::Int && a.name.rfind("trips", 0) == 0)
        features.insert("trip count from an argument");
      if (a.kind == ArgumentSpec::Kind::Buffer && !a.buffer.is_output &&
          a.buffer.values.special)
        features.insert("inf/NaN inputs");
    }
    features.insert(k.grid.y > 1 ? "2-D grid" : "1-D grid");
    k.function->walk([&](ir::Operation &op) {
      ++ops[op.code()];
      for (ir::Value *r : op.results())
        types.insert(r->type().element());
      switch (op.code()) {
      case OpCode::Constant:
        if (const auto *v = std::get_if<double>(&op.attributes().at("value")))
          if (!std::isfinite(*v))
            features.insert("inf/NaN constants");
        break;
      case OpCode::Load:
        features.insert(op.num_operands() == 3   ? "load with other"
                        : op.num_operands() == 2 ? "masked load"
                                                 : "unmasked load");
        break;
      case OpCode::Store:
        features.insert(op.operand(1)->type().is_block() ? "block store"
                                                         : "scalar store");
        break;
      case OpCode::Reduce:
        if (op.num_operands() == 2)
          features.insert("argmax/argmin");
        if (op.operand(0)->type().rank() == 2)
          features.insert("2-D reduction");
        combine_features(op, features);
        break;
      case OpCode::Scan:
        if (op.has_attr("reverse") && op.int_attr("reverse"))
          features.insert("reverse scan");
        if (op.num_operands() > 1)
          features.insert("scan of several operands");
        combine_features(op, features);
        break;
      case OpCode::For: {
        ir::Operation *step = op.operand(2)->defining_op();
        if (step && step->code() == OpCode::Constant &&
            step->int_attr("value") < 0)
          features.insert("loop counting down");
        for (size_t i = 3; i < op.num_operands(); ++i)
          if (op.operand(i)->type().is_pointer())
            features.insert("loop-carried pointers");
        if (op.parent_op() && op.parent_op()->code() == OpCode::For)
          features.insert("nested loops");
        break;
      }
      case OpCode::If:
        if (op.num_results() > 0)
          features.insert("if with results");
        break;
      case OpCode::Broadcast:
        if (op.operand(0)->type().rank() == 2 &&
            op.operand(0)->type().num_elements() <
                op.result()->type().num_elements())
          features.insert("broadcast to 2-D");
        break;
      default:
        break;
      }
    });
  }
  for (OpCode c : {OpCode::Constant,      OpCode::ProgramId,
                   OpCode::NumPrograms,   OpCode::Arange,
                   OpCode::Splat,         OpCode::Broadcast,
                   OpCode::ExpandDims,    OpCode::Reshape,
                   OpCode::Permute,       OpCode::Cast,
                   OpCode::Bitcast,       OpCode::Add,
                   OpCode::Sub,           OpCode::Mul,
                   OpCode::Div,           OpCode::Rem,
                   OpCode::And,           OpCode::Or,
                   OpCode::Xor,           OpCode::Shl,
                   OpCode::Shr,           OpCode::Minimum,
                   OpCode::Maximum,       OpCode::Umulhi,
                   OpCode::Cmp,           OpCode::AddPtr,
                   OpCode::Neg,           OpCode::Not,
                   OpCode::Abs,           OpCode::Exp,
                   OpCode::Exp2,          OpCode::Log,
                   OpCode::Log2,          OpCode::Sqrt,
                   OpCode::Rsqrt,         OpCode::Sin,
                   OpCode::Cos,           OpCode::Tanh,
                   OpCode::Erf,           OpCode::Floor,
                   OpCode::Ceil,          OpCode::Fma,
                   OpCode::Select,        OpCode::Load,
                   OpCode::Store,         OpCode::Reduce,
                   OpCode::Scan,          OpCode::MultipleOf,
                   OpCode::MaxContiguous, OpCode::MaxConstancy,
                   OpCode::For,           OpCode::If})
    EXPECT_GT(ops[c], 0) << ir::opcode_name(c);
  for (Scalar s :
       {Scalar::I1, Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64,
        Scalar::U32, Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64})
    EXPECT_TRUE(types.count(s)) << ir::scalar_name(s);
  for (const char *f : {"n = 1",
                        "n an odd prime",
                        "1-D grid",
                        "2-D grid",
                        "load with other",
                        "masked load",
                        "unmasked load",
                        "block store",
                        "scalar store",
                        "argmax/argmin",
                        "2-D reduction",
                        "reverse scan",
                        "scan of several operands",
                        "combine with an if",
                        "combine dividing integers",
                        "combine with a remainder",
                        "combine of three operands",
                        "loop counting down",
                        "loop-carried pointers",
                        "nested loops",
                        "trip count from an argument",
                        "if with results",
                        "broadcast to 2-D",
                        "inf/NaN inputs",
                        "inf/NaN constants"})
    EXPECT_TRUE(features.count(f)) << f;
}

} // namespace
} // namespace blocc::differential

namespace blocc::differential {
namespace {

// Atomics (generation 2) contend: every one is masked and
// combines integers into an output buffer of at most 7 slots; the kernels
// of the same seeds without atomics are as they were.
TEST(GeneratorTest, AtomicsCombineIntegersIntoFewSlotsUnderMasks) {
  GeneratorOptions with;
  with.generation = 2;
  int atomics = 0;
  std::set<std::string> kinds;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    GeneratedKernel k = generate_kernel(seed, with);
    ASSERT_NO_THROW(ir::verify(*k.function)) << "seed " << seed;
    k.function->walk([&](ir::Operation &op) {
      if (op.code() != OpCode::AtomicRmw)
        return;
      ++atomics;
      kinds.insert(op.string_attr("kind"));
      EXPECT_EQ(op.num_operands(), 3u) << "seed " << seed << ": no mask";
      EXPECT_TRUE(ir::is_integer(op.result()->type().element()));
      // addptr(splat(buffer), slot): the buffer is an output of few slots.
      const ir::Operation *addptr = op.operand(0)->defining_op();
      const ir::Operation *splat = addptr->operand(0)->defining_op();
      const ir::Value *buffer = splat->operand(0);
      for (size_t i = 0; i < k.function->num_arguments(); ++i)
        if (k.function->argument(i) == buffer) {
          EXPECT_TRUE(k.arguments[i].buffer.is_output) << "seed " << seed;
          EXPECT_LE(k.arguments[i].buffer.elements, 7) << "seed " << seed;
        }
    });
    GeneratedKernel without = generate_kernel(seed);
    without.function->walk([&](ir::Operation &op) {
      EXPECT_NE(op.code(), OpCode::AtomicRmw) << "seed " << seed;
    });
  }
  EXPECT_GE(atomics, 40);
  EXPECT_EQ(kinds,
            (std::set<std::string>{"add", "and", "max", "min", "or", "xor"}));
}

// Three-dimensional boxes (generation 3): some kernels tile a B x M x N
// array with a program id per dimension and load and store whole boxes
// under masks from all three; generation 2 has none.
TEST(GeneratorTest, BoxesTileThreeDimensionsWithAProgramIdEach) {
  GeneratorOptions newest, older;
  newest.generation = 3;
  older.generation = 2;
  int boxes = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    GeneratedKernel k = generate_kernel(seed, newest);
    bool third_axis = false, box_load = false;
    k.function->walk([&](ir::Operation &op) {
      if (op.code() == OpCode::ProgramId && op.int_attr("axis") == 2)
        third_axis = true;
      if (op.code() == OpCode::Load && op.result()->type().rank() == 3)
        box_load = true;
    });
    if (third_axis) {
      ++boxes;
      EXPECT_TRUE(box_load) << "seed " << seed;
      EXPECT_EQ(k.arguments[0].name, "B") << "seed " << seed;
    }
    generate_kernel(seed, older).function->walk([&](ir::Operation &op) {
      EXPECT_FALSE(op.code() == OpCode::ProgramId && op.int_attr("axis") == 2)
          << "seed " << seed;
    });
  }
  EXPECT_GE(boxes, 25);
}

} // namespace
} // namespace blocc::differential

namespace blocc::differential {
namespace {

/// The K argument's value of a matmul loop `for k in [0, K) step BK`, or -1
/// when `loop` has no such bounds.
int64_t matmul_k(const GeneratedKernel &k, const ir::Operation &loop) {
  for (size_t i = 0; i < k.function->num_arguments(); ++i)
    if (k.function->argument(i) == loop.operand(1) &&
        k.arguments[i].name[0] == 'K')
      return k.arguments[i].value;
  return -1;
}

// Matmul loops (generation 4): a loop over K in steps of BK whose body
// loads a tile of each matrix under a mask and adds their dot to a carried
// accumulator; many have a K tail, some carry their pointers; generation 3
// has none.
TEST(GeneratorTest, MatmulLoopsAccumulateDotsOfMaskedTilesOverK) {
  GeneratorOptions newest, older;
  newest.generation = 4;
  older.generation = 3;
  int loops = 0, tails = 0, carried_pointers = 0;
  auto is_matmul_loop = [](const ir::Operation &op) {
    if (op.code() != OpCode::For)
      return false;
    for (const auto &inner : op.region(0)->ops())
      if (inner->code() == OpCode::Dot &&
          inner->operand(0)->defining_op()->code() == OpCode::Load &&
          inner->operand(1)->defining_op()->code() == OpCode::Load)
        return true;
    return false;
  };
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    GeneratedKernel k = generate_kernel(seed, newest);
    k.function->walk([&](ir::Operation &op) {
      if (!is_matmul_loop(op))
        return;
      ++loops;
      int64_t k_size = matmul_k(k, op);
      int64_t step = op.operand(2)->defining_op()->int_attr("value");
      ASSERT_GT(k_size, 0) << "seed " << seed;
      tails += k_size % step != 0;
      carried_pointers += op.num_operands() == 6;
      for (const auto &inner : op.region(0)->ops())
        if (inner->code() == OpCode::Load) {
          EXPECT_GE(inner->num_operands(), 2u)
              << "seed " << seed << ": no mask";
        }
    });
    generate_kernel(seed, older).function->walk([&](ir::Operation &op) {
      EXPECT_FALSE(is_matmul_loop(op)) << "seed " << seed;
    });
  }
  EXPECT_GE(loops, 30);
  EXPECT_GE(tails, 10);
  EXPECT_GE(carried_pointers, 10);
}

/// Dots that `shaped` accepts in the kernels of seeds 1 .. 600 of
/// `generation`, checking that the previous generation has none.
int dots_new_in_generation(
    int generation, const std::function<bool(const ir::Operation &)> &shaped) {
  GeneratorOptions newest, older;
  newest.generation = generation;
  older.generation = generation - 1;
  int count = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    generate_kernel(seed, newest).function->walk([&](ir::Operation &op) {
      count += shaped(op);
    });
    generate_kernel(seed, older).function->walk([&](ir::Operation &op) {
      EXPECT_FALSE(shaped(op)) << "seed " << seed;
    });
  }
  return count;
}

/// Whether `op` is a two-dimensional dot of `input` into `result` larger
/// than 16 x 8 whose tiles tensor cores take whole, `k_step` along K.
bool tensor_core_shaped(const ir::Operation &op,
                        const std::function<bool(Scalar)> &input, Scalar result,
                        int64_t k_step) {
  if (op.code() != OpCode::Dot || op.result()->type().rank() != 2)
    return false;
  const ir::Type &a = op.operand(0)->type(), &c = op.result()->type();
  return input(a.element()) && c.element() == result && c.dim(0) % 16 == 0 &&
         a.dim(1) % k_step == 0 && c.dim(1) % 8 == 0 &&
         c.dim(0) * c.dim(1) > 128;
}

// Tensor-core tiles (generation 5): some matmul loops multiply f16 or
// bf16 tiles of 16 or 32 rows, 8 to 64 columns and 16 or 32 along K into
// f32, the shapes a dot runs on tensor cores in; generation 4 has none
// of 32 rows or more than 8 columns.
TEST(GeneratorTest, TensorCoreTilesComeInMatmulLoops) {
  auto halves = [](Scalar s) { return s == Scalar::F16 || s == Scalar::BF16; };
  auto shaped = [&](const ir::Operation &op) {
    return tensor_core_shaped(op, halves, Scalar::F32, 16);
  };
  EXPECT_GE(dots_new_in_generation(5, shaped), 10);
}

// Generation 6: some of those tiles multiply int8 into int32, 32 or 64
// along K (the k of an 8-bit MMA); generation 5 has none.
TEST(GeneratorTest, Int8TensorCoreTilesComeInGenerationSix) {
  auto int8 = [](Scalar s) { return s == Scalar::I8; };
  auto shaped = [&](const ir::Operation &op) {
    return tensor_core_shaped(op, int8, Scalar::I32, 32);
  };
  EXPECT_GE(dots_new_in_generation(6, shaped), 5);
}

} // namespace
} // namespace blocc::differential
