// One test per verifier rule: each builds a small function that breaks the
// rule and checks the message names the op, its source line, and what was
// expected.
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/passes.h"

#include <gtest/gtest.h>

namespace blocc::ir {
namespace {

Type scalar(Scalar s) { return Type::scalar(s); }
Type block(Scalar s, std::vector<int64_t> shape) {
  return Type::block(Type::scalar(s), shape);
}
Type ptr_block(Scalar pointee, std::vector<int64_t> shape) {
  return Type::block(Type::pointer(pointee), shape);
}

class VerifierTest : public ::testing::Test {
protected:
  VerifierTest() : f("kernel"), b(&f.body()) {
    b.set_location({"/home/user/kernel.cpp", 7});
  }

  /// Ends the body with a return and runs the verifier; returns its message
  /// ("" when the function verifies).
  std::string verify_message() {
    Operation *last = f.body().back();
    if (!last || last->code() != OpCode::Return) {
      Builder end(&f.body());
      end.create(OpCode::Return, {}, {});
    }
    try {
      verify(f);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  }

  void expect_error(const std::string &part) {
    std::string message = verify_message();
    EXPECT_NE(message.find(part), std::string::npos)
        << "message: '" << message << "'\nexpected it to contain: '" << part
        << "'";
  }

  /// A builder at the end of `block`, at the test's source line.
  Builder in(Block *block) {
    Builder inner(block);
    inner.set_location(b.location());
    return inner;
  }

  Value *i32(int64_t v) { return b.int_constant(v, scalar(Scalar::I32)); }
  Value *arange(int64_t n) {
    return b.create_value(OpCode::Arange, {}, block(Scalar::I32, {n}),
                          {{"start", int64_t{0}}, {"end", n}});
  }
  Value *f32_block(std::vector<int64_t> shape) {
    return b.float_constant(1.0, block(Scalar::F32, shape));
  }

  Function f;
  Builder b;
};

TEST_F(VerifierTest, AcceptsAWellFormedKernel) {
  Value *x = f.add_argument(Type::pointer(Scalar::F32), {"x", 16});
  Value *n = f.add_argument(scalar(Scalar::I32), {"n", 16});
  Value *pid = b.create_value(OpCode::ProgramId, {}, scalar(Scalar::I32),
                              {{"axis", int64_t{0}}});
  Value *base = b.binary(OpCode::Mul, pid, i32(128));
  Value *offs = b.binary(OpCode::Add, b.splat(base, {128}), arange(128));
  Value *mask = b.cmp("lt", offs, b.splat(n, {128}));
  Value *ptrs = b.create_value(OpCode::AddPtr, {b.splat(x, {128}), offs},
                               ptr_block(Scalar::F32, {128}));
  Value *v =
      b.create_value(OpCode::Load, {ptrs, mask}, block(Scalar::F32, {128}));
  b.create(OpCode::Store, {ptrs, b.binary(OpCode::Add, v, v), mask}, {});
  EXPECT_EQ(verify_message(), "");
}

// --- structure ---------------------------------------------------------------

TEST_F(VerifierTest, BodyMustEndWithReturn) {
  i32(1);
  try {
    verify(f);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "constant at kernel.cpp:7: is the last operation of the "
              "function body but is not a terminator; expected the block to "
              "end with return");
  }
}

TEST_F(VerifierTest, EmptyBody) {
  try {
    verify(f);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "function 'kernel' has an empty body; expected it to end with "
              "return");
  }
}

TEST_F(VerifierTest, TerminatorInTheMiddle) {
  b.create(OpCode::Return, {}, {});
  i32(1);
  b.create(OpCode::Return, {}, {});
  expect_error("return at kernel.cpp:7: is a terminator but is not the last "
               "operation of the function body");
}

TEST_F(VerifierTest, YieldCannotEndTheFunction) {
  b.create(OpCode::Yield, {}, {});
  try {
    verify(f);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "yield at kernel.cpp:7: cannot end the function body; expected "
              "return");
  }
}

TEST_F(VerifierTest, ReturnCannotEndARegion) {
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {});
  in(op->add_region()).create(OpCode::Return, {}, {});
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  expect_error("return at kernel.cpp:7: cannot end a region; expected yield");
}

TEST_F(VerifierTest, EmptyRegion) {
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {});
  op->add_region();
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  expect_error("if at kernel.cpp:7: has an empty region; expected it to end "
               "with yield");
}

TEST_F(VerifierTest, RegionMustEndWithYield) {
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {});
  in(op->add_region()).int_constant(3, scalar(Scalar::I32));
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  expect_error("constant at kernel.cpp:7: is the last operation of a region "
               "but is not a terminator; expected the block to end with "
               "yield");
}

TEST_F(VerifierTest, UseBeforeDefinition) {
  Value *one = i32(1);
  Operation *add = b.create(OpCode::Add, {one, one}, {scalar(Scalar::I32)});
  b.set_location({"kernel.cpp", 9});
  Value *two = i32(2);
  add->set_operand(1, two);
  expect_error("add at kernel.cpp:7: operand 1 is used before its definition "
               "by constant at kernel.cpp:9; expected every value to be "
               "defined before its uses");
}

TEST_F(VerifierTest, UseOfAValueFromAnotherRegion) {
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {});
  Builder then_builder(op->add_region());
  then_builder.set_location({"kernel.cpp", 3});
  Value *inner = then_builder.int_constant(5, scalar(Scalar::I32));
  then_builder.create(OpCode::Yield, {}, {});
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  b.binary(OpCode::Add, inner, inner);
  expect_error("add at kernel.cpp:7: operand 0 is defined by constant at "
               "kernel.cpp:3 inside a region that does not enclose this use");
}

TEST_F(VerifierTest, UseOfARegionArgumentOutsideIt) {
  Operation *loop = b.create(OpCode::For, {i32(0), i32(4), i32(1)}, {});
  Block *body = loop->add_region();
  Value *iv = body->add_argument(scalar(Scalar::I32));
  Builder(body).create(OpCode::Yield, {}, {});
  b.binary(OpCode::Add, iv, iv);
  expect_error("add at kernel.cpp:7: operand 0 is an argument of a region "
               "that does not enclose this use");
}

TEST_F(VerifierTest, ValuesFromEnclosingBlocksAreVisible) {
  Value *outer = i32(3);
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {scalar(Scalar::I32)});
  Builder then_builder(op->add_region());
  then_builder.create(OpCode::Yield,
                      {then_builder.binary(OpCode::Add, outer, outer)}, {});
  Builder(op->add_region()).create(OpCode::Yield, {outer}, {});
  EXPECT_EQ(verify_message(), "");
}

TEST_F(VerifierTest, NullOperand) {
  b.create(OpCode::Neg, {nullptr}, {scalar(Scalar::I32)});
  expect_error("neg at kernel.cpp:7: operand 0 is null");
}

TEST_F(VerifierTest, WrongOperandCount) {
  b.create(OpCode::Add, {i32(1)}, {scalar(Scalar::I32)});
  expect_error("add at kernel.cpp:7: has 1 operand; expected 2");
}

TEST_F(VerifierTest, WrongResultCount) {
  b.create(OpCode::Add, {i32(1), i32(2)}, {});
  expect_error("add at kernel.cpp:7: has 0 results; expected 1");
}

TEST_F(VerifierTest, RegionOnAnOpWithoutRegions) {
  Operation *op =
      b.create(OpCode::Add, {i32(1), i32(2)}, {scalar(Scalar::I32)});
  op->add_region();
  expect_error("add at kernel.cpp:7: has 1 region; expected 0");
}

// --- types and shapes --------------------------------------------------------

TEST_F(VerifierTest, BlockDimensionsArePowersOfTwo) {
  b.float_constant(0.0, block(Scalar::F32, {128, 100}));
  expect_error("constant at kernel.cpp:7: result 0 has type "
               "tensor<128x100xf32> whose dimension 1 is 100; expected every "
               "block dimension to be a power of two");
}

TEST_F(VerifierTest, FunctionArgumentShapes) {
  f.add_argument(block(Scalar::F32, {3}));
  expect_error("argument 0 of function 'kernel' has type tensor<3xf32> whose "
               "dimension 0 is 3");
}

TEST_F(VerifierTest, InvalidResultType) {
  b.create(OpCode::Add, {i32(1), i32(2)}, {Type()});
  expect_error("add at kernel.cpp:7: result 0 has no valid type");
}

TEST_F(VerifierTest, ConstantNeedsValue) {
  b.create(OpCode::Constant, {}, {scalar(Scalar::I32)});
  expect_error("constant at kernel.cpp:7: needs a 'value' attribute");
}

TEST_F(VerifierTest, FloatConstantOfIntegerType) {
  b.float_constant(1.5, scalar(Scalar::I32));
  expect_error("constant at kernel.cpp:7: has a float value but integer type "
               "i32");
}

TEST_F(VerifierTest, ConstantOutOfRange) {
  b.int_constant(300, scalar(Scalar::I8));
  expect_error("constant at kernel.cpp:7: value 300 does not fit i8; expected "
               "-128 to 255");
}

TEST_F(VerifierTest, PointerConstant) {
  b.int_constant(0, Type::pointer(Scalar::F32));
  expect_error("constant at kernel.cpp:7: has pointer type ptr<f32>");
}

TEST_F(VerifierTest, ProgramIdAxis) {
  b.create_value(OpCode::ProgramId, {}, scalar(Scalar::I32),
                 {{"axis", int64_t{3}}});
  expect_error("program_id at kernel.cpp:7: axis 3 is out of range; expected "
               "0 to 2");
}

TEST_F(VerifierTest, ProgramIdType) {
  b.create_value(OpCode::ProgramId, {}, scalar(Scalar::I64),
                 {{"axis", int64_t{0}}});
  expect_error("program_id at kernel.cpp:7: result 0 has type i64; expected "
               "i32");
}

TEST_F(VerifierTest, ArangeLengthIsAPowerOfTwo) {
  b.create_value(OpCode::Arange, {}, block(Scalar::I32, {8}),
                 {{"start", int64_t{2}}, {"end", int64_t{12}}});
  expect_error("arange at kernel.cpp:7: arange(2, 12) has 10 elements; "
               "expected end - start to be a power of two");
}

TEST_F(VerifierTest, ArangeEmpty) {
  b.create_value(OpCode::Arange, {}, block(Scalar::I32, {8}),
                 {{"start", int64_t{4}}, {"end", int64_t{4}}});
  expect_error("arange(4, 4) is empty; expected end > start");
}

TEST_F(VerifierTest, ArangeResultType) {
  b.create_value(OpCode::Arange, {}, block(Scalar::I32, {8}),
                 {{"start", int64_t{0}}, {"end", int64_t{16}}});
  expect_error("arange at kernel.cpp:7: result 0 has type tensor<8xi32>; "
               "expected tensor<16xi32>");
}

TEST_F(VerifierTest, ElementwiseOperandsShareOneType) {
  b.create(OpCode::Add, {f32_block({64}), f32_block({128})},
           {block(Scalar::F32, {64})});
  expect_error("add at kernel.cpp:7: operand 1 (tensor<128xf32>) does not "
               "have the type of operand 0 (tensor<64xf32>); expected equal "
               "types");
}

TEST_F(VerifierTest, ElementwiseResultType) {
  b.create(OpCode::Mul, {i32(1), i32(2)}, {scalar(Scalar::I64)});
  expect_error("mul at kernel.cpp:7: result 0 has type i64; expected i32");
}

TEST_F(VerifierTest, ArithmeticOnPointers) {
  Value *p = f.add_argument(Type::pointer(Scalar::F32));
  b.binary(OpCode::Add, p, p);
  expect_error("add at kernel.cpp:7: is not defined on pointers (ptr<f32>); "
               "expected numbers (use addptr for pointer offsets)");
}

TEST_F(VerifierTest, ArithmeticOnFp8) {
  Value *x = f.add_argument(scalar(Scalar::F8E4M3));
  b.binary(OpCode::Mul, x, x);
  expect_error("mul at kernel.cpp:7: is not defined on f8e4m3: fp8 is a "
               "storage format");
}

TEST_F(VerifierTest, BitwiseOnFloats) {
  Value *x = f32_block({16});
  b.binary(OpCode::Xor, x, x);
  expect_error("xor at kernel.cpp:7: is not defined on tensor<16xf32>; "
               "expected integer elements");
}

TEST_F(VerifierTest, MathOnIntegers) {
  b.unary(OpCode::Exp, i32(1));
  expect_error("exp at kernel.cpp:7: is not defined on i32; expected float "
               "elements");
}

// exp2's subnormals = "flush": f32 exp2 only, and no other value.
TEST_F(VerifierTest, FlushingSubnormals) {
  Value *x = f32_block({16});
  b.create_value(OpCode::Exp2, {x}, x->type(), {{"subnormals", "flush"}});
  b.create_value(OpCode::Exp, {x}, x->type(), {{"subnormals", "flush"}});
  expect_error("exp at kernel.cpp:7: has subnormals = \"flush\", which only "
               "exp2 takes");
}

TEST_F(VerifierTest, FlushingSubnormalsOfF64) {
  Value *x = b.float_constant(1.0, block(Scalar::F64, {16}));
  b.create_value(OpCode::Exp2, {x}, x->type(), {{"subnormals", "flush"}});
  expect_error("exp2 at kernel.cpp:7: flushes subnormals of tensor<16xf64>; "
               "only f32 exp2 flushes");
}

TEST_F(VerifierTest, SubnormalsOtherThanFlush) {
  Value *x = f32_block({16});
  b.create_value(OpCode::Exp2, {x}, x->type(), {{"subnormals", "keep"}});
  expect_error("exp2 at kernel.cpp:7: has subnormals 'keep'; expected "
               "'flush'");
}

TEST_F(VerifierTest, FmaOperandTypes) {
  Value *x = f32_block({16});
  b.create(OpCode::Fma, {x, x, f32_block({32})}, {x->type()});
  expect_error("fma at kernel.cpp:7: operand 2 (tensor<32xf32>) does not have "
               "the type of operand 0");
}

TEST_F(VerifierTest, CmpResultIsBoolean) {
  Value *x = arange(16);
  b.create_value(OpCode::Cmp, {x, x}, x->type(), {{"predicate", "lt"}});
  expect_error("cmp at kernel.cpp:7: result 0 has type tensor<16xi32>; "
               "expected tensor<16xi1>");
}

TEST_F(VerifierTest, CmpPredicate) {
  Value *x = arange(16);
  b.cmp("less", x, x);
  expect_error("cmp at kernel.cpp:7: has predicate 'less'; expected one of "
               "eq, ne, lt, le, gt, ge");
}

TEST_F(VerifierTest, CmpOperandTypes) {
  b.cmp("eq", arange(16), arange(32));
  expect_error("cmp at kernel.cpp:7: operand 1 (tensor<32xi32>) does not "
               "have the type of operand 0 (tensor<16xi32>)");
}

TEST_F(VerifierTest, AddPtrNeedsPointer) {
  Value *x = arange(16);
  b.create_value(OpCode::AddPtr, {x, x}, x->type());
  expect_error("addptr at kernel.cpp:7: operand 0 (tensor<16xi32>) is not a "
               "pointer; expected pointer elements");
}

TEST_F(VerifierTest, AddPtrNeedsIntegerOffset) {
  Value *p = f.add_argument(Type::pointer(Scalar::F32));
  Value *ps = b.splat(p, {16});
  b.create_value(OpCode::AddPtr, {ps, f32_block({16})}, ps->type());
  expect_error("addptr at kernel.cpp:7: offset operand 1 (tensor<16xf32>) is "
               "not an integer");
}

TEST_F(VerifierTest, AddPtrShapes) {
  Value *p = f.add_argument(Type::pointer(Scalar::F32));
  Value *ps = b.splat(p, {16});
  b.create_value(OpCode::AddPtr, {ps, arange(32)}, ps->type());
  expect_error("addptr at kernel.cpp:7: operand 1 (tensor<32xi32>) does not "
               "have the shape of operand 0 (tensor<16xptr<f32>>)");
}

TEST_F(VerifierTest, SelectCondition) {
  Value *x = arange(16);
  b.create_value(OpCode::Select, {x, x, x}, x->type());
  expect_error("select at kernel.cpp:7: condition operand 0 (tensor<16xi32>) "
               "is not boolean; expected i1 elements");
}

TEST_F(VerifierTest, SelectConditionShape) {
  Value *x = arange(16);
  Value *c = b.int_constant(1, block(Scalar::I1, {32}));
  b.create_value(OpCode::Select, {c, x, x}, x->type());
  expect_error("select at kernel.cpp:7: operand 0 (tensor<32xi1>) does not "
               "have the shape of operand 1 (tensor<16xi32>)");
}

// --- shape ops ---------------------------------------------------------------

TEST_F(VerifierTest, SplatOfABlock) {
  Value *x = arange(16);
  b.create_value(OpCode::Splat, {x}, block(Scalar::I32, {16}));
  expect_error("splat at kernel.cpp:7: operand 0 (tensor<16xi32>) is a "
               "block; expected a scalar");
}

TEST_F(VerifierTest, SplatElementType) {
  b.create_value(OpCode::Splat, {i32(1)}, block(Scalar::I64, {16}));
  expect_error("splat at kernel.cpp:7: result 0 has type tensor<16xi64>; "
               "expected tensor<16xi32>");
}

TEST_F(VerifierTest, BroadcastDimension) {
  Value *x = f32_block({2, 16});
  b.create_value(OpCode::Broadcast, {x}, block(Scalar::F32, {4, 16}));
  expect_error("broadcast at kernel.cpp:7: cannot broadcast dimension 0 of "
               "size 2 to 4; expected the operand's dimension to be 1 or "
               "equal");
}

TEST_F(VerifierTest, BroadcastRank) {
  Value *x = f32_block({16});
  b.create_value(OpCode::Broadcast, {x}, block(Scalar::F32, {4, 16}));
  expect_error("broadcast at kernel.cpp:7: result type tensor<4x16xf32> does "
               "not keep the element type and rank");
}

TEST_F(VerifierTest, ExpandDimsShape) {
  Value *x = f32_block({16});
  b.create_value(OpCode::ExpandDims, {x}, block(Scalar::F32, {1, 16}),
                 {{"axis", int64_t{1}}});
  expect_error("expand_dims at kernel.cpp:7: result 0 has type "
               "tensor<1x16xf32>; expected tensor<16x1xf32>");
}

TEST_F(VerifierTest, ExpandDimsAxis) {
  Value *x = f32_block({16});
  b.create_value(OpCode::ExpandDims, {x}, block(Scalar::F32, {1, 16}),
                 {{"axis", int64_t{2}}});
  expect_error("expand_dims at kernel.cpp:7: axis 2 is out of range; "
               "expected 0 to 1");
}

TEST_F(VerifierTest, ReshapeElementCount) {
  Value *x = f32_block({16});
  b.create_value(OpCode::Reshape, {x}, block(Scalar::F32, {4, 8}));
  expect_error("reshape at kernel.cpp:7: result type tensor<4x8xf32> has 32 "
               "elements but operand 0 (tensor<16xf32>) has 16; expected the "
               "same element count");
}

TEST_F(VerifierTest, PermuteOrder) {
  Value *x = f32_block({4, 8});
  b.create_value(OpCode::Permute, {x}, block(Scalar::F32, {8, 4}),
                 {{"order", std::vector<int64_t>{1, 1}}});
  expect_error("permute at kernel.cpp:7: order [1, 1] is not a permutation "
               "of the 2 dimensions of operand 0 (tensor<4x8xf32>)");
}

TEST_F(VerifierTest, PermuteResult) {
  Value *x = f32_block({4, 8});
  b.create_value(OpCode::Permute, {x}, block(Scalar::F32, {4, 8}),
                 {{"order", std::vector<int64_t>{1, 0}}});
  expect_error("permute at kernel.cpp:7: result 0 has type tensor<4x8xf32>; "
               "expected tensor<8x4xf32>");
}

TEST_F(VerifierTest, JoinResult) {
  Value *x = f32_block({4});
  b.create_value(OpCode::Join, {x, x}, block(Scalar::F32, {8}));
  expect_error("join at kernel.cpp:7: result 0 has type tensor<8xf32>; "
               "expected tensor<4x2xf32>");
}

TEST_F(VerifierTest, SplitNeedsLastDimensionTwo) {
  Value *x = f32_block({4, 4});
  b.create(OpCode::Split, {x},
           {block(Scalar::F32, {4}), block(Scalar::F32, {4})});
  expect_error("split at kernel.cpp:7: operand 0 (tensor<4x4xf32>) cannot be "
               "split; expected a last dimension of size 2");
}

TEST_F(VerifierTest, CatDimensions) {
  Value *x = f32_block({4, 8});
  Value *y = f32_block({4, 16});
  b.create_value(OpCode::Cat, {x, y}, block(Scalar::F32, {8, 8}),
                 {{"axis", int64_t{0}}});
  expect_error("cat at kernel.cpp:7: operands differ in dimension 1 (8 vs "
               "16); expected equal sizes outside the axis 0");
}

TEST_F(VerifierTest, CatResult) {
  Value *x = f32_block({4, 8});
  b.create_value(OpCode::Cat, {x, x}, block(Scalar::F32, {4, 8}),
                 {{"axis", int64_t{0}}});
  expect_error("cat at kernel.cpp:7: result 0 has type tensor<4x8xf32>; "
               "expected tensor<8x8xf32>");
}

// --- conversions -------------------------------------------------------------

TEST_F(VerifierTest, CastKeepsShape) {
  b.create_value(OpCode::Cast, {arange(16)}, block(Scalar::F32, {32}));
  expect_error("cast at kernel.cpp:7: result type tensor<32xf32> does not "
               "have the shape of operand 0 (tensor<16xi32>); expected the "
               "same shape");
}

TEST_F(VerifierTest, CastBetweenPointersAndNumbers) {
  Value *p = f.add_argument(Type::pointer(Scalar::F32));
  b.create_value(OpCode::Cast, {p}, scalar(Scalar::I64));
  expect_error("cast at kernel.cpp:7: converts between pointers and numbers "
               "(ptr<f32> to i64); expected ptr_to_int or int_to_ptr");
}

TEST_F(VerifierTest, BitcastWidth) {
  b.create_value(OpCode::Bitcast, {i32(1)}, scalar(Scalar::F16));
  expect_error("bitcast at kernel.cpp:7: changes the element width from 32 "
               "to 16 bits; expected elements of the same width");
}

TEST_F(VerifierTest, PtrToIntResult) {
  Value *p = f.add_argument(Type::pointer(Scalar::F32));
  b.create_value(OpCode::PtrToInt, {p}, scalar(Scalar::I32));
  expect_error("ptr_to_int at kernel.cpp:7: result 0 has type i32; expected "
               "i64");
}

TEST_F(VerifierTest, IntToPtrOperand) {
  b.create_value(OpCode::IntToPtr, {i32(0)}, Type::pointer(Scalar::F32));
  expect_error("int_to_ptr at kernel.cpp:7: operand 0 (i32) is not i64; "
               "expected i64 elements");
}

// --- memory ------------------------------------------------------------------

class MemoryVerifierTest : public VerifierTest {
protected:
  MemoryVerifierTest() {
    Value *p = f.add_argument(Type::pointer(Scalar::F32));
    ptrs = b.create_value(OpCode::AddPtr, {b.splat(p, {16}), arange(16)},
                          ptr_block(Scalar::F32, {16}));
  }
  Value *ptrs = nullptr;
};

TEST_F(MemoryVerifierTest, LoadResultType) {
  b.create_value(OpCode::Load, {ptrs}, block(Scalar::F16, {16}));
  expect_error("load at kernel.cpp:7: result 0 has type tensor<16xf16>; "
               "expected tensor<16xf32>");
}

TEST_F(MemoryVerifierTest, LoadMaskShape) {
  Value *mask = b.int_constant(1, block(Scalar::I1, {32}));
  b.create_value(OpCode::Load, {ptrs, mask}, block(Scalar::F32, {16}));
  expect_error("load at kernel.cpp:7: mask (tensor<32xi1>) does not have the "
               "pointer's shape [16]; expected equal shapes");
}

TEST_F(MemoryVerifierTest, LoadMaskIsBoolean) {
  b.create_value(OpCode::Load, {ptrs, arange(16)}, block(Scalar::F32, {16}));
  expect_error("load at kernel.cpp:7: mask (tensor<16xi32>) is not boolean; "
               "expected i1 elements");
}

TEST_F(MemoryVerifierTest, LoadOtherType) {
  Value *mask = b.int_constant(1, block(Scalar::I1, {16}));
  Value *other = b.int_constant(0, block(Scalar::I32, {16}));
  b.create_value(OpCode::Load, {ptrs, mask, other}, block(Scalar::F32, {16}));
  expect_error("load at kernel.cpp:7: 'other' operand 2 (tensor<16xi32>) "
               "does not have the loaded type; expected tensor<16xf32>");
}

TEST_F(MemoryVerifierTest, LoadOfNonPointer) {
  Value *x = arange(16);
  b.create_value(OpCode::Load, {x}, x->type());
  expect_error("load at kernel.cpp:7: operand 0 (tensor<16xi32>) is not a "
               "pointer");
}

TEST_F(MemoryVerifierTest, LoadVolatileAttributeKind) {
  b.create_value(OpCode::Load, {ptrs}, block(Scalar::F32, {16}),
                 {{"volatile", std::string("yes")}});
  expect_error("load at kernel.cpp:7: attribute 'volatile' must be an "
               "integer");
}

TEST_F(MemoryVerifierTest, StoreValueType) {
  b.create(OpCode::Store, {ptrs, arange(16)}, {});
  expect_error("store at kernel.cpp:7: value operand 1 (tensor<16xi32>) does "
               "not match the pointer tensor<16xptr<f32>>; expected "
               "tensor<16xf32>");
}

TEST_F(MemoryVerifierTest, StoreMask) {
  Value *mask = b.int_constant(1, block(Scalar::I1, {8}));
  b.create(OpCode::Store, {ptrs, f32_block({16}), mask}, {});
  expect_error("store at kernel.cpp:7: mask (tensor<8xi1>) does not have the "
               "pointer's shape [16]");
}

TEST_F(MemoryVerifierTest, StoreHasNoResults) {
  b.create(OpCode::Store, {ptrs, f32_block({16})}, {block(Scalar::F32, {16})});
  expect_error("store at kernel.cpp:7: has 1 result; expected 0");
}

TEST_F(MemoryVerifierTest, AtomicKind) {
  b.create_value(OpCode::AtomicRmw, {ptrs, f32_block({16})},
                 block(Scalar::F32, {16}), {{"kind", "mul"}});
  expect_error("atomic_rmw at kernel.cpp:7: has kind 'mul'; expected one of "
               "add, max, min, and, or, xor, xchg");
}

TEST_F(MemoryVerifierTest, AtomicBitwiseOnFloats) {
  b.create_value(OpCode::AtomicRmw, {ptrs, f32_block({16})},
                 block(Scalar::F32, {16}), {{"kind", "xor"}});
  expect_error("atomic_rmw at kernel.cpp:7: atomic xor is not defined on "
               "tensor<16xf32>; expected integer elements");
}

TEST_F(MemoryVerifierTest, AtomicValueType) {
  b.create_value(OpCode::AtomicRmw, {ptrs, arange(16)},
                 block(Scalar::F32, {16}), {{"kind", "add"}});
  expect_error("atomic_rmw at kernel.cpp:7: value operand 1 (tensor<16xi32>) "
               "does not match the pointer");
}

TEST_F(MemoryVerifierTest, AtomicCasTypes) {
  Value *v = f32_block({16});
  b.create_value(OpCode::AtomicCas, {ptrs, v, arange(16)},
                 block(Scalar::F32, {16}));
  expect_error("atomic_cas at kernel.cpp:7: operand 2 (tensor<16xi32>) does "
               "not match the pointer tensor<16xptr<f32>>; expected "
               "tensor<16xf32>");
}

// --- collectives -------------------------------------------------------------

/// A reduce of `x` along `axis` whose combine region adds its arguments.
Operation *build_sum(Builder &b, Value *x, int64_t axis, Type result,
                     Type arg_type) {
  Operation *op = b.create(OpCode::Reduce, {x}, {result}, {{"axis", axis}});
  Block *combine = op->add_region();
  Value *l = combine->add_argument(arg_type);
  Value *r = combine->add_argument(arg_type);
  Builder cb(combine);
  cb.create(OpCode::Yield, {cb.binary(OpCode::Add, l, r)}, {});
  return op;
}

TEST_F(VerifierTest, ReduceAcceptsASum) {
  build_sum(b, f32_block({4, 16}), 1, block(Scalar::F32, {4}),
            scalar(Scalar::F32));
  EXPECT_EQ(verify_message(), "");
}

TEST_F(VerifierTest, ReduceResultType) {
  build_sum(b, f32_block({4, 16}), 1, block(Scalar::F32, {16}),
            scalar(Scalar::F32));
  expect_error("reduce at kernel.cpp:7: result 0 has type tensor<16xf32>; "
               "expected tensor<4xf32>");
}

TEST_F(VerifierTest, ReduceAxis) {
  build_sum(b, f32_block({16}), 1, scalar(Scalar::F32), scalar(Scalar::F32));
  expect_error("reduce at kernel.cpp:7: axis 1 is out of range; expected 0");
}

TEST_F(VerifierTest, ReduceRegionArgumentCount) {
  Operation *op = b.create(OpCode::Reduce, {f32_block({16})},
                           {scalar(Scalar::F32)}, {{"axis", int64_t{0}}});
  Block *combine = op->add_region();
  Value *l = combine->add_argument(scalar(Scalar::F32));
  Builder(combine).create(OpCode::Yield, {l}, {});
  expect_error("reduce at kernel.cpp:7: combine region has 1 argument; "
               "expected 2 (two scalars per operand)");
}

TEST_F(VerifierTest, ReduceRegionArgumentType) {
  build_sum(b, f32_block({16}), 0, scalar(Scalar::F32), scalar(Scalar::I32));
  expect_error("reduce at kernel.cpp:7: combine region argument 0 has type "
               "i32; expected f32 (an element of operand 0)");
}

TEST_F(VerifierTest, ReduceYieldType) {
  Operation *op = b.create(OpCode::Reduce, {f32_block({16})},
                           {scalar(Scalar::F32)}, {{"axis", int64_t{0}}});
  Block *combine = op->add_region();
  combine->add_argument(scalar(Scalar::F32));
  combine->add_argument(scalar(Scalar::F32));
  Builder cb(combine);
  cb.create(OpCode::Yield, {cb.int_constant(0, scalar(Scalar::I32))}, {});
  expect_error("reduce at kernel.cpp:7: combine region yields i32 as value "
               "0; expected f32 (one element per operand)");
}

TEST_F(VerifierTest, ReduceYieldCount) {
  Operation *op = b.create(OpCode::Reduce, {f32_block({16})},
                           {scalar(Scalar::F32)}, {{"axis", int64_t{0}}});
  Block *combine = op->add_region();
  combine->add_argument(scalar(Scalar::F32));
  combine->add_argument(scalar(Scalar::F32));
  Builder(combine).create(OpCode::Yield, {}, {});
  expect_error("reduce at kernel.cpp:7: combine region yields 0 values; "
               "expected 1 (one element per operand)");
}

TEST_F(VerifierTest, CombineRegionsArePure) {
  // A load in an if in a scan's combine region; without it the scan
  // verifies.
  Value *x = f.add_argument(Type::pointer(Scalar::F32), {"x", 16});
  Operation *scan =
      b.create(OpCode::Scan, {f32_block({16})}, {block(Scalar::F32, {16})},
               {{"axis", int64_t{0}}});
  Block *combine = scan->add_region();
  Value *l = combine->add_argument(scalar(Scalar::F32));
  Value *r = combine->add_argument(scalar(Scalar::F32));
  Builder cb = in(combine);
  Operation *branch =
      cb.create(OpCode::If, {cb.cmp("lt", l, r)}, {scalar(Scalar::F32)});
  Block *then_region = branch->add_region();
  Builder tb = in(then_region);
  tb.set_location({"kernel.cpp", 9});
  tb.create(OpCode::Yield,
            {tb.create_value(OpCode::Load, {x}, scalar(Scalar::F32))}, {});
  in(branch->add_region()).create(OpCode::Yield, {r}, {});
  cb.create(OpCode::Yield, {branch->result(0)}, {});
  expect_error("load at kernel.cpp:9: is inside the combine region of scan "
               "at kernel.cpp:7; a combine region is a pure function of the "
               "elements it combines: no memory access, print or assert");

  then_region->erase(then_region->back()); // the yield
  then_region->erase(then_region->back()); // the load
  Builder(then_region).create(OpCode::Yield, {l}, {});
  EXPECT_EQ(verify_message(), "");
}

TEST_F(VerifierTest, ReduceOperandsShareAShape) {
  Operation *op = b.create(OpCode::Reduce, {f32_block({16}), arange(32)},
                           {scalar(Scalar::F32), scalar(Scalar::I32)},
                           {{"axis", int64_t{0}}});
  op->add_region();
  expect_error("reduce at kernel.cpp:7: operand 1 (tensor<32xi32>) does not "
               "have the shape of operand 0 (tensor<16xf32>)");
}

TEST_F(VerifierTest, ScanResultKeepsTheShape) {
  Value *x = f32_block({16});
  Operation *op = b.create(OpCode::Scan, {x}, {scalar(Scalar::F32)},
                           {{"axis", int64_t{0}}});
  Block *combine = op->add_region();
  Value *l = combine->add_argument(scalar(Scalar::F32));
  Value *r = combine->add_argument(scalar(Scalar::F32));
  Builder cb(combine);
  cb.create(OpCode::Yield, {cb.binary(OpCode::Add, l, r)}, {});
  expect_error("scan at kernel.cpp:7: result 0 has type f32; expected "
               "tensor<16xf32>");
}

TEST_F(VerifierTest, DotInnerDimensions) {
  b.create_value(
      OpCode::Dot,
      {f32_block({16, 32}), f32_block({16, 64}), f32_block({16, 64})},
      block(Scalar::F32, {16, 64}));
  expect_error("dot at kernel.cpp:7: a is 16x32 but b is 16x64; expected a "
               "MxK and b KxN (inner dimensions equal)");
}

TEST_F(VerifierTest, DotAccumulatorShape) {
  b.create_value(
      OpCode::Dot,
      {f32_block({16, 32}), f32_block({32, 64}), f32_block({16, 32})},
      block(Scalar::F32, {16, 32}));
  expect_error("dot at kernel.cpp:7: accumulator tensor<16x32xf32> is not "
               "16x64; expected MxN for a MxK and b KxN");
}

TEST_F(VerifierTest, DotRank) {
  b.create_value(OpCode::Dot,
                 {f32_block({16}), f32_block({16}), f32_block({16})},
                 block(Scalar::F32, {16}));
  expect_error("dot at kernel.cpp:7: operand 0 (tensor<16xf32>) has rank 1; "
               "expected rank 2");
}

TEST_F(VerifierTest, DotResultIsTheAccumulatorType) {
  b.create_value(
      OpCode::Dot,
      {f32_block({16, 32}), f32_block({32, 64}), f32_block({16, 64})},
      block(Scalar::F16, {16, 64}));
  expect_error("dot at kernel.cpp:7: result 0 has type tensor<16x64xf16>; "
               "expected tensor<16x64xf32>");
}

TEST_F(VerifierTest, DotElementTypes) {
  Value *a = b.float_constant(1.0, block(Scalar::F16, {16, 32}));
  b.create_value(OpCode::Dot, {a, f32_block({32, 64}), f32_block({16, 64})},
                 block(Scalar::F32, {16, 64}));
  expect_error("dot at kernel.cpp:7: a has f16 elements but b has f32; "
               "expected the same element type");
}

TEST_F(VerifierTest, DotInputPrecision) {
  b.create_value(
      OpCode::Dot,
      {f32_block({16, 32}), f32_block({32, 64}), f32_block({16, 64})},
      block(Scalar::F32, {16, 64}), {{"input_precision", "fast"}});
  expect_error("dot at kernel.cpp:7: has input_precision 'fast'; expected "
               "tf32, tf32x3 or ieee");
}

// --- hints and debug ---------------------------------------------------------

TEST_F(VerifierTest, HintValuesPerDimension) {
  Value *x = arange(16);
  b.create_value(OpCode::MultipleOf, {x}, x->type(),
                 {{"values", std::vector<int64_t>{16, 16}}});
  expect_error("multiple_of at kernel.cpp:7: has 2 values for operand 0 "
               "(tensor<16xi32>); expected one per dimension (1)");
}

TEST_F(VerifierTest, HintValuesPositive) {
  Value *x = arange(16);
  b.create_value(OpCode::MaxContiguous, {x}, x->type(),
                 {{"values", std::vector<int64_t>{0}}});
  expect_error("max_contiguous at kernel.cpp:7: has hint value 0; expected "
               "positive values");
}

TEST_F(VerifierTest, HintNeedsValues) {
  Value *x = arange(16);
  b.create_value(OpCode::MaxConstancy, {x}, x->type());
  expect_error("max_constancy at kernel.cpp:7: needs an integer list "
               "attribute 'values'");
}

TEST_F(VerifierTest, AssertCondition) {
  b.create(OpCode::Assert, {arange(16)}, {}, {{"message", "boom"}});
  expect_error("assert at kernel.cpp:7: condition operand 0 (tensor<16xi32>) "
               "is not boolean");
}

TEST_F(VerifierTest, PrintPrefixKind) {
  b.create(OpCode::Print, {arange(16)}, {}, {{"prefix", int64_t{3}}});
  expect_error("print at kernel.cpp:7: attribute 'prefix' must be a string");
}

TEST_F(VerifierTest, ReturnTakesNoOperands) {
  b.create(OpCode::Return, {i32(0)}, {});
  expect_error("return at kernel.cpp:7: has 1 operand; expected 0");
}

// --- control flow ------------------------------------------------------------

/// for %iv = lb to ub step s iter(init) { yield body(iv, carried) }
Operation *build_for(Builder &b, std::vector<Value *> operands,
                     std::vector<Type> result_types,
                     std::vector<Type> arg_types) {
  Operation *op = b.create(OpCode::For, std::move(operands), result_types);
  Block *body = op->add_region();
  std::vector<Value *> yields;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    Value *arg = body->add_argument(arg_types[i]);
    if (i > 0)
      yields.push_back(arg);
  }
  Builder(body).create(OpCode::Yield, yields, {});
  return op;
}

TEST_F(VerifierTest, ForAcceptsCarriedValues) {
  Value *acc = f32_block({16});
  build_for(b, {i32(0), i32(8), i32(1), acc}, {acc->type()},
            {scalar(Scalar::I32), acc->type()});
  EXPECT_EQ(verify_message(), "");
}

TEST_F(VerifierTest, ForBoundsShareAType) {
  Value *ub = b.int_constant(8, scalar(Scalar::I64));
  build_for(b, {i32(0), ub, i32(1)}, {}, {scalar(Scalar::I32)});
  expect_error("for at kernel.cpp:7: upper bound operand 1 (i64) does not "
               "have the type of the lower bound (i32); expected bounds and "
               "step of one type");
}

TEST_F(VerifierTest, ForBoundsAreIntegers) {
  Value *lb = b.float_constant(0, scalar(Scalar::F32));
  build_for(b, {lb, lb, lb}, {}, {scalar(Scalar::F32)});
  expect_error("for at kernel.cpp:7: lower bound operand 0 (f32) is not an "
               "integer scalar");
}

TEST_F(VerifierTest, ForTooFewOperands) {
  build_for(b, {i32(0), i32(8)}, {}, {scalar(Scalar::I32)});
  expect_error("for at kernel.cpp:7: has 2 operands; expected at least 3 "
               "(lower bound, upper bound, step)");
}

TEST_F(VerifierTest, ForResultsMatchCarriedValues) {
  Value *acc = f32_block({16});
  build_for(b, {i32(0), i32(8), i32(1), acc}, {},
            {scalar(Scalar::I32), acc->type()});
  expect_error("for at kernel.cpp:7: has 0 results; expected 1");
}

TEST_F(VerifierTest, ForResultTypes) {
  Value *acc = f32_block({16});
  build_for(b, {i32(0), i32(8), i32(1), acc}, {scalar(Scalar::F32)},
            {scalar(Scalar::I32), acc->type()});
  expect_error("for at kernel.cpp:7: result 0 has type f32; expected "
               "tensor<16xf32>");
}

TEST_F(VerifierTest, ForRegionArgumentCount) {
  Value *acc = f32_block({16});
  build_for(b, {i32(0), i32(8), i32(1), acc}, {acc->type()},
            {scalar(Scalar::I32)});
  expect_error("for at kernel.cpp:7: body has 1 argument; expected 2 (the "
               "induction variable, then one per loop-carried value)");
}

TEST_F(VerifierTest, ForInductionVariableType) {
  build_for(b, {i32(0), i32(8), i32(1)}, {}, {scalar(Scalar::I64)});
  expect_error("for at kernel.cpp:7: induction variable has type i64; "
               "expected i32 (the type of the bounds)");
}

TEST_F(VerifierTest, ForCarriedArgumentType) {
  Value *acc = f32_block({16});
  build_for(b, {i32(0), i32(8), i32(1), acc}, {acc->type()},
            {scalar(Scalar::I32), block(Scalar::F32, {32})});
  expect_error("for at kernel.cpp:7: body argument 1 has type "
               "tensor<32xf32>; expected tensor<16xf32> (the type of initial "
               "value 0)");
}

TEST_F(VerifierTest, ForYieldMatchesCarriedTypes) {
  Value *acc = f32_block({16});
  Operation *op =
      b.create(OpCode::For, {i32(0), i32(8), i32(1), acc}, {acc->type()});
  Block *body = op->add_region();
  Value *iv = body->add_argument(scalar(Scalar::I32));
  body->add_argument(acc->type());
  Builder(body).create(OpCode::Yield, {iv}, {});
  expect_error("for at kernel.cpp:7: body yields i32 as value 0; expected "
               "tensor<16xf32> (one per loop-carried value)");
}

TEST_F(VerifierTest, ForYieldCount) {
  Value *acc = f32_block({16});
  Operation *op =
      b.create(OpCode::For, {i32(0), i32(8), i32(1), acc}, {acc->type()});
  Block *body = op->add_region();
  body->add_argument(scalar(Scalar::I32));
  body->add_argument(acc->type());
  Builder(body).create(OpCode::Yield, {}, {});
  expect_error("for at kernel.cpp:7: body yields 0 values; expected 1 (one "
               "per loop-carried value)");
}

TEST_F(VerifierTest, IfConditionIsScalarBool) {
  Operation *op = b.create(OpCode::If, {i32(1)}, {});
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  expect_error("if at kernel.cpp:7: condition operand 0 (i32) is not an i1 "
               "scalar");
}

TEST_F(VerifierTest, IfNeedsTwoRegions) {
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {});
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  expect_error("if at kernel.cpp:7: has 1 region; expected 2");
}

TEST_F(VerifierTest, IfBranchesYieldTheResultTypes) {
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {scalar(Scalar::I32)});
  Builder then_builder(op->add_region());
  then_builder.create(OpCode::Yield,
                      {then_builder.int_constant(1, scalar(Scalar::I32))}, {});
  Builder else_builder(op->add_region());
  else_builder.create(
      OpCode::Yield, {else_builder.float_constant(1, scalar(Scalar::F32))}, {});
  expect_error("if at kernel.cpp:7: else-region yields f32 as value 0; "
               "expected i32 (one per result of the if)");
}

TEST_F(VerifierTest, IfRegionsTakeNoArguments) {
  Value *c = b.int_constant(1, scalar(Scalar::I1));
  Operation *op = b.create(OpCode::If, {c}, {});
  Block *then_block = op->add_region();
  then_block->add_argument(scalar(Scalar::I32));
  Builder(then_block).create(OpCode::Yield, {}, {});
  Builder(op->add_region()).create(OpCode::Yield, {}, {});
  expect_error("if at kernel.cpp:7: then-region has 1 argument; expected "
               "none");
}

// --- the remaining rules, one test each
// ---------------------------------------

TEST_F(VerifierTest, ConstantValueOfAnotherKind) {
  b.create(OpCode::Constant, {}, {scalar(Scalar::I32)},
           {{"value", std::string("seven")}});
  expect_error("constant at kernel.cpp:7: has a 'value' attribute that is "
               "neither an integer nor a float");
}

TEST_F(VerifierTest, ArangeNeedsBounds) {
  b.create_value(OpCode::Arange, {}, block(Scalar::I32, {8}),
                 {{"end", int64_t{8}}});
  expect_error("arange at kernel.cpp:7: needs an integer attribute 'start'");
}

TEST_F(VerifierTest, SplatResultIsABlock) {
  b.create_value(OpCode::Splat, {i32(1)}, scalar(Scalar::I32));
  expect_error("splat at kernel.cpp:7: result has scalar type i32; expected "
               "a block");
}

TEST_F(VerifierTest, BroadcastOfAScalar) {
  b.create_value(OpCode::Broadcast, {i32(1)}, block(Scalar::I32, {8}));
  expect_error("broadcast at kernel.cpp:7: operand 0 (i32) is a scalar; "
               "expected a block (use splat for scalars)");
}

TEST_F(VerifierTest, ExpandDimsBeyondRankThree) {
  Value *x = f32_block({2, 2, 2});
  b.create_value(OpCode::ExpandDims, {x}, block(Scalar::F32, {2, 2, 2}),
                 {{"axis", int64_t{0}}});
  expect_error("expand_dims at kernel.cpp:7: operand 0 (tensor<2x2x2xf32>) "
               "already has rank 3; expected at most 2");
}

TEST_F(VerifierTest, ReshapeKeepsTheElementType) {
  b.create_value(OpCode::Reshape, {f32_block({16})}, block(Scalar::I32, {16}));
  expect_error("reshape at kernel.cpp:7: result type tensor<16xi32> changes "
               "the element type of operand 0 (tensor<16xf32>); expected the "
               "same element type");
}

TEST_F(VerifierTest, JoinOperandsShareAType) {
  b.create_value(OpCode::Join, {f32_block({4}), arange(4)},
                 block(Scalar::F32, {4, 2}));
  expect_error("join at kernel.cpp:7: operand 1 (tensor<4xi32>) does not "
               "have the type of operand 0 (tensor<4xf32>)");
}

TEST_F(VerifierTest, JoinBeyondRankThree) {
  Value *x = f32_block({2, 2, 2});
  b.create_value(OpCode::Join, {x, x}, block(Scalar::F32, {2, 2, 2}));
  expect_error("join at kernel.cpp:7: operand 0 (tensor<2x2x2xf32>) has rank "
               "3; expected at most 2");
}

TEST_F(VerifierTest, CatOfScalars) {
  b.create_value(OpCode::Cat, {i32(1), i32(2)}, block(Scalar::I32, {2}),
                 {{"axis", int64_t{0}}});
  expect_error("cat at kernel.cpp:7: operand 0 (i32) is a scalar; expected a "
               "block");
}

TEST_F(VerifierTest, CatElementTypes) {
  b.create_value(OpCode::Cat, {f32_block({4}), arange(4)},
                 block(Scalar::F32, {8}), {{"axis", int64_t{0}}});
  expect_error("cat at kernel.cpp:7: operand 1 (tensor<4xi32>) does not have "
               "the element type and rank of operand 0 (tensor<4xf32>)");
}

TEST_F(VerifierTest, PtrToIntOfANumber) {
  b.create_value(OpCode::PtrToInt, {b.int_constant(0, scalar(Scalar::I64))},
                 scalar(Scalar::I64));
  expect_error("ptr_to_int at kernel.cpp:7: operand 0 (i64) is not a "
               "pointer; expected pointer elements");
}

TEST_F(VerifierTest, IntToPtrResult) {
  b.create_value(OpCode::IntToPtr, {b.int_constant(0, scalar(Scalar::I64))},
                 scalar(Scalar::I64));
  expect_error("int_to_ptr at kernel.cpp:7: result type i64 is not a "
               "pointer; expected pointer elements");
}

TEST_F(VerifierTest, CmpOnFp8) {
  Value *x = f.add_argument(scalar(Scalar::F8E5M2));
  b.cmp("lt", x, x);
  expect_error("cmp at kernel.cpp:7: cannot compare f8e5m2: fp8 is a storage "
               "format; expected a cast first");
}

TEST_F(VerifierTest, CmpNeedsAPredicate) {
  Value *x = arange(8);
  b.create_value(OpCode::Cmp, {x, x}, block(Scalar::I1, {8}));
  expect_error("cmp at kernel.cpp:7: needs a string attribute 'predicate'");
}

TEST_F(VerifierTest, SelectBranchesShareAType) {
  Value *c = b.int_constant(1, block(Scalar::I1, {8}));
  b.create_value(OpCode::Select, {c, arange(8), f32_block({8})},
                 block(Scalar::I32, {8}));
  expect_error("select at kernel.cpp:7: operand 2 (tensor<8xf32>) does not "
               "have the type of operand 1 (tensor<8xi32>)");
}

TEST_F(MemoryVerifierTest, LoadCacheAttributeKind) {
  b.create_value(OpCode::Load, {ptrs}, block(Scalar::F32, {16}),
                 {{"cache", int64_t{1}}});
  expect_error("load at kernel.cpp:7: attribute 'cache' must be a string");
}

TEST_F(MemoryVerifierTest, AtomicMask) {
  Value *mask = arange(16);
  b.create_value(OpCode::AtomicRmw, {ptrs, f32_block({16}), mask},
                 block(Scalar::F32, {16}), {{"kind", "add"}});
  expect_error("atomic_rmw at kernel.cpp:7: mask (tensor<16xi32>) is not "
               "boolean; expected i1 elements");
}

TEST_F(MemoryVerifierTest, AtomicSemanticsKind) {
  b.create_value(OpCode::AtomicRmw, {ptrs, f32_block({16})},
                 block(Scalar::F32, {16}),
                 {{"kind", "add"}, {"sem", int64_t{2}}});
  expect_error("atomic_rmw at kernel.cpp:7: attribute 'sem' must be a string");
}

TEST_F(VerifierTest, ReduceNeedsOperands) {
  Operation *op = b.create(OpCode::Reduce, {}, {}, {{"axis", int64_t{0}}});
  op->add_region();
  expect_error("reduce at kernel.cpp:7: has no operands; expected at least "
               "one block");
}

TEST_F(VerifierTest, ReduceOfAScalar) {
  build_sum(b, i32(1), 0, scalar(Scalar::I32), scalar(Scalar::I32));
  expect_error("reduce at kernel.cpp:7: operand 0 (i32) is a scalar; "
               "expected a block");
}

TEST_F(VerifierTest, ScanReverseKind) {
  Value *x = f32_block({16});
  Operation *op = b.create(OpCode::Scan, {x}, {x->type()},
                           {{"axis", int64_t{0}}, {"reverse", "yes"}});
  op->add_region();
  expect_error("scan at kernel.cpp:7: attribute 'reverse' must be an integer");
}

TEST_F(VerifierTest, DotBatchSizes) {
  b.create_value(
      OpCode::Dot,
      {f32_block({2, 16, 16}), f32_block({4, 16, 16}), f32_block({2, 16, 16})},
      block(Scalar::F32, {2, 16, 16}));
  expect_error("dot at kernel.cpp:7: operands have different batch sizes; "
               "expected one leading batch dimension shared by a, b and the "
               "accumulator");
}

TEST_F(VerifierTest, DotOfPointers) {
  Value *p = f.add_argument(Type::pointer(Scalar::F32));
  Value *ps = b.splat(p, {16, 16});
  b.create_value(OpCode::Dot, {ps, ps, f32_block({16, 16})},
                 block(Scalar::F32, {16, 16}));
  expect_error("dot at kernel.cpp:7: operand 0 (tensor<16x16xptr<f32>>) "
               "holds pointers; expected numbers");
}

// --- tensor descriptors
// -------------------------------------------------------

/// The operands of a 2-D descriptor access of an f32 array: base, two
/// extents, two strides (i64), two offsets (i32).
struct DescriptorParts {
  Value *base;
  std::vector<Value *> shape, strides, offsets;
};

DescriptorParts descriptor_parts(Function &f, Builder &b) {
  Value *base = f.add_argument(Type::pointer(Scalar::F32), {"x", 16});
  Value *extent = b.int_constant(100, scalar(Scalar::I64));
  Value *one = b.int_constant(1, scalar(Scalar::I64));
  Value *offset = b.int_constant(8, scalar(Scalar::I32));
  return {base, {extent, extent}, {extent, one}, {offset, offset}};
}

TEST_F(VerifierTest, AcceptsDescriptorLoadAndStore) {
  DescriptorParts d = descriptor_parts(f, b);
  Value *tile =
      b.descriptor_load(d.base, d.shape, d.strides, d.offsets, {16, 32});
  b.descriptor_store(d.base, d.shape, d.strides, d.offsets, tile);
  EXPECT_EQ(verify_message(), "");
}

TEST_F(VerifierTest, DescriptorOperandCountFollowsTheTileRank) {
  DescriptorParts d = descriptor_parts(f, b);
  d.offsets.pop_back(); // a 2-D tile with one offset
  b.descriptor_load(d.base, d.shape, d.strides, d.offsets, {16, 32});
  expect_error("descriptor_load at kernel.cpp:7: has 6 operands for the "
               "result tensor<16x32xf32> of rank 2; expected 7 (a base, one "
               "extent, stride and offset per dimension)");
}

TEST_F(VerifierTest, DescriptorTileIsABlock) {
  DescriptorParts d = descriptor_parts(f, b);
  Value *one = b.float_constant(1.0, scalar(Scalar::F32));
  b.create(OpCode::DescriptorStore, {d.base, one}, {});
  expect_error("descriptor_store at kernel.cpp:7: value f32 is a scalar; "
               "expected a block (the tile)");
}

TEST_F(VerifierTest, DescriptorBaseIsAScalarPointer) {
  DescriptorParts d = descriptor_parts(f, b);
  Value *not_a_pointer = d.shape[0];
  b.create_value(OpCode::DescriptorLoad,
                 {not_a_pointer, d.shape[0], d.strides[1], d.offsets[0]},
                 block(Scalar::F32, {16}));
  expect_error("base operand 0 (i64) is not a scalar pointer");
}

TEST_F(VerifierTest, DescriptorTileHoldsThePointee) {
  DescriptorParts d = descriptor_parts(f, b);
  std::vector<Value *> operands{d.base, d.shape[0], d.strides[1], d.offsets[0]};
  b.create_value(OpCode::DescriptorLoad, operands, block(Scalar::F16, {16}));
  expect_error("result tensor<16xf16> does not hold the base's pointee; "
               "expected tensor<16xf32>");
}

TEST_F(VerifierTest, DescriptorExtentsAndStridesAreI64) {
  DescriptorParts d = descriptor_parts(f, b);
  d.strides[0] = i32(100);
  b.descriptor_load(d.base, d.shape, d.strides, d.offsets, {16, 32});
  expect_error("stride operand 3 (i32) is not i64; expected an i64 scalar");
}

// Offsets are i32 (a tensor descriptor's) or i64 (a block pointer's).
TEST_F(VerifierTest, DescriptorOffsetsAreI32OrI64) {
  DescriptorParts d = descriptor_parts(f, b);
  d.offsets[1] = d.shape[0];
  b.descriptor_load(d.base, d.shape, d.strides, d.offsets, {16, 32});
  EXPECT_EQ(verify_message(), "");
}

TEST_F(VerifierTest, DescriptorOffsetsAreNoOtherIntegers) {
  DescriptorParts d = descriptor_parts(f, b);
  d.offsets[1] = b.create_value(OpCode::Constant, {}, scalar(Scalar::I16),
                                {{"value", int64_t{0}}});
  b.descriptor_load(d.base, d.shape, d.strides, d.offsets, {16, 32});
  expect_error("offset operand 6 (i16) is not i32; expected an i32 scalar");
}

TEST_F(VerifierTest, DescriptorAccessesAreImpureInACombine) {
  DescriptorParts d = descriptor_parts(f, b);
  Value *v = f32_block({16});
  Operation *reduce = b.create(OpCode::Reduce, {v}, {scalar(Scalar::F32)},
                               {{"axis", int64_t{0}}});
  Block *combine = reduce->add_region();
  Value *lhs = combine->add_argument(scalar(Scalar::F32));
  combine->add_argument(scalar(Scalar::F32));
  Builder inner = in(combine);
  inner.descriptor_load(d.base, {d.shape[0]}, {d.strides[1]}, {d.offsets[0]},
                        {16});
  inner.create(OpCode::Yield, {lhs}, {});
  expect_error("descriptor_load at kernel.cpp:7: is inside the combine "
               "region of reduce");
}

TEST_F(VerifierTest, UseOfARemovedOp) {
  Value *one = i32(1);
  Operation *def = one->defining_op();
  b.binary(OpCode::Add, one, one);
  auto removed = f.body().remove(def);
  expect_error("add at kernel.cpp:7: operand 0 is the result of constant at "
               "kernel.cpp:7, which is no longer part of the function");
}

TEST_F(VerifierTest, UnknownLocationIsOmitted) {
  b.set_location({});
  b.create(OpCode::Add, {i32(1)}, {scalar(Scalar::I32)});
  std::string message = verify_message();
  EXPECT_EQ(message.rfind("add: has 1 operand; expected 2", 0), 0u) << message;
}

} // namespace
} // namespace blocc::ir
