// The textual IR must round-trip: print(parse(print(f))) == print(f) for
// every function. The main test builds one verified function that uses every
// opcode, every attribute kind, nested regions, every scalar type, pointer
// address spaces and blocks of rank 1 to 3, and checks the round trip and
// that the parsed copy still verifies. The other tests pin the text of
// details (names, floats, locations) and the parser's error messages.
#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <set>

namespace blocc::ir {
namespace {

Type scalar(Scalar s) { return Type::scalar(s); }
Type block(Scalar s, std::vector<int64_t> shape) {
  return Type::block(Type::scalar(s), shape);
}
Type block_of(Type element, std::vector<int64_t> shape) {
  return Type::block(element, shape);
}

/// Prints, parses, prints again; both texts must agree, and the parsed
/// function must verify when the original does.
std::string expect_round_trip(Function &f) {
  std::string first = print(f);
  std::unique_ptr<Function> parsed;
  try {
    parsed = parse_function(first);
  } catch (const Error &e) {
    ADD_FAILURE() << "parse failed: " << e.what() << "\n" << first;
    return first;
  }
  EXPECT_EQ(print(*parsed), first);
  bool original_ok = true;
  try {
    verify(f);
  } catch (const Error &) {
    original_ok = false;
  }
  if (original_ok) {
    EXPECT_NO_THROW(verify(*parsed)) << first;
  }
  return first;
}

std::string parse_error(std::string_view text) {
  try {
    parse_module(text);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

#define EXPECT_PARSE_ERROR(text, part)                                         \
  do {                                                                         \
    std::string message_ = parse_error(text);                                  \
    EXPECT_NE(message_.find(part), std::string::npos)                          \
        << "message: '" << message_ << "'\nexpected it to contain: '" << part  \
        << "'";                                                                \
  } while (0)

/// Builds one function that exercises every opcode; records which opcodes
/// it used so the test can check that none was forgotten.
class EveryOpBuilder {
public:
  EveryOpBuilder() : f("every_op"), b(&f.body()) {}

  std::unique_ptr<Function> build() {
    Value *x = f.add_argument(Type::pointer(Scalar::F32), {"x", 16});
    Value *shared = f.add_argument(Type::pointer(Scalar::F16, 3), {"smem", 1});
    Value *n = f.add_argument(scalar(Scalar::I32), {"n", 16});
    Value *counts = f.add_argument(Type::pointer(Scalar::I64), {});
    b.set_location({"/home/user/src/kernel.cpp", 3});

    constants();
    Value *pid =
        op(OpCode::ProgramId, {}, scalar(Scalar::I32), {{"axis", int64_t{0}}});
    op(OpCode::NumPrograms, {}, scalar(Scalar::I32), {{"axis", int64_t{2}}});
    b.set_location({});
    Value *offs = op(OpCode::Arange, {}, block(Scalar::I32, {64}),
                     {{"start", int64_t{0}}, {"end", int64_t{64}}});
    Value *base =
        op(OpCode::Mul, {pid, b.int_constant(64, scalar(Scalar::I32))},
           scalar(Scalar::I32));
    Value *idx = op(OpCode::Add,
                    {op(OpCode::Splat, {base}, block(Scalar::I32, {64})), offs},
                    block(Scalar::I32, {64}));
    Value *mask =
        b.cmp("lt", idx, op(OpCode::Splat, {n}, block(Scalar::I32, {64})));
    seen.insert(OpCode::Cmp);
    Value *ptrs =
        op(OpCode::AddPtr,
           {op(OpCode::Splat, {x}, block_of(Type::pointer(Scalar::F32), {64})),
            idx},
           block_of(Type::pointer(Scalar::F32), {64}));
    Value *zero = b.float_constant(0.0, block(Scalar::F32, {64}));
    Value *v = op(OpCode::Load, {ptrs, mask, zero}, block(Scalar::F32, {64}),
                  {{"cache", std::string("ca")},
                   {"eviction", std::string("evict_last")},
                   {"volatile", int64_t{1}}});

    shapes(v);
    conversions(v, x, shared);
    arithmetic(v, idx);
    memory(ptrs, v, mask, counts);
    collectives(v);
    hints_and_debug(idx, mask);
    control_flow(v, n);
    descriptors(counts);
    b.create(OpCode::Return, {}, {});
    seen.insert(OpCode::Return);
    return std::make_unique<Function>(std::move(f));
  }

  std::set<OpCode> seen;

private:
  Value *op(OpCode code, std::vector<Value *> operands, Type type,
            Attributes attributes = {}) {
    seen.insert(code);
    return b.create_value(code, std::move(operands), type,
                          std::move(attributes));
  }

  void constants() {
    seen.insert(OpCode::Constant);
    // Every scalar type, with values at the edges of their ranges.
    b.int_constant(1, scalar(Scalar::I1));
    b.int_constant(-128, scalar(Scalar::I8));
    b.int_constant(32767, scalar(Scalar::I16));
    b.int_constant(std::numeric_limits<int32_t>::min(), scalar(Scalar::I32));
    b.int_constant(std::numeric_limits<int64_t>::min(), scalar(Scalar::I64));
    b.int_constant(255, scalar(Scalar::U8));
    b.int_constant(65535, scalar(Scalar::U16));
    b.int_constant(4294967295, scalar(Scalar::U32));
    b.int_constant(-1, scalar(Scalar::U64)); // all bits set
    b.float_constant(0.5, scalar(Scalar::F16));
    b.float_constant(-3.0, scalar(Scalar::BF16));
    b.float_constant(0.1, scalar(Scalar::F32));
    b.float_constant(1e-300, scalar(Scalar::F64));
    b.float_constant(5e-324, scalar(Scalar::F64)); // smallest subnormal
    b.float_constant(-0.0, scalar(Scalar::F64));
    b.float_constant(1e300, scalar(Scalar::F64));
    b.float_constant(std::numeric_limits<double>::infinity(),
                     scalar(Scalar::F32));
    b.float_constant(-std::numeric_limits<double>::infinity(),
                     scalar(Scalar::F32));
    b.float_constant(std::numeric_limits<double>::quiet_NaN(),
                     scalar(Scalar::F32));
    b.float_constant(std::bit_cast<double>(uint64_t{0xfff0000000000123}),
                     scalar(Scalar::F64));
    b.float_constant(448.0, scalar(Scalar::F8E4M3));
    b.float_constant(2.0, scalar(Scalar::F8E5M2));
    b.int_constant(7, scalar(Scalar::F32)); // an integer value for a float
    b.int_constant(3, block(Scalar::I16, {2, 4, 8}));
  }

  void shapes(Value *v) {
    Type f32 = scalar(Scalar::F32);
    Value *e = op(OpCode::ExpandDims, {v}, block(Scalar::F32, {1, 64}),
                  {{"axis", int64_t{0}}});
    op(OpCode::Broadcast, {e}, block(Scalar::F32, {4, 64}));
    Value *r3 = op(OpCode::Reshape, {v}, block(Scalar::F32, {2, 4, 8}));
    op(OpCode::Permute, {r3}, block(Scalar::F32, {8, 2, 4}),
       {{"order", std::vector<int64_t>{2, 0, 1}}});
    Value *j = op(OpCode::Join, {v, v}, block(Scalar::F32, {64, 2}));
    Operation *s = b.create(OpCode::Split, {j},
                            {block_of(f32, {64}), block_of(f32, {64})});
    seen.insert(OpCode::Split);
    op(OpCode::Cat, {s->result(0), s->result(1)}, block(Scalar::F32, {128}),
       {{"axis", int64_t{0}}});
  }

  void conversions(Value *v, Value *x, Value *shared) {
    op(OpCode::Cast, {v}, block(Scalar::BF16, {64}));
    op(OpCode::Bitcast, {v}, block(Scalar::U32, {64}));
    Value *address = op(OpCode::PtrToInt, {x}, scalar(Scalar::I64));
    op(OpCode::IntToPtr, {address}, Type::pointer(Scalar::U8, 5));
    op(OpCode::PtrToInt, {shared}, scalar(Scalar::I64));
  }

  void arithmetic(Value *v, Value *idx) {
    for (OpCode c : {OpCode::Add, OpCode::Sub, OpCode::Mul, OpCode::Div,
                     OpCode::Rem, OpCode::Minimum, OpCode::Maximum})
      op(c, {v, v}, v->type());
    for (OpCode c : {OpCode::And, OpCode::Or, OpCode::Xor, OpCode::Shl,
                     OpCode::Shr, OpCode::Umulhi})
      op(c, {idx, idx}, idx->type());
    op(OpCode::Neg, {v}, v->type());
    op(OpCode::Abs, {v}, v->type());
    op(OpCode::Not, {idx}, idx->type());
    for (int c = static_cast<int>(OpCode::Exp);
         c <= static_cast<int>(OpCode::Ceil); ++c)
      op(static_cast<OpCode>(c), {v}, v->type());
    op(OpCode::Fma, {v, v, v}, v->type());
    Value *positive = b.cmp("gt", v, v);
    op(OpCode::Select, {positive, v, v}, v->type());
  }

  void memory(Value *ptrs, Value *v, Value *mask, Value *counts) {
    b.create(OpCode::Store, {ptrs, v, mask}, {},
             {{"cache", std::string("wb")},
              {"eviction", std::string("evict_first")}});
    b.create(OpCode::Store, {ptrs, v}, {});
    seen.insert(OpCode::Store);
    op(OpCode::AtomicRmw, {ptrs, v, mask}, v->type(),
       {{"kind", std::string("add")},
        {"sem", std::string("acq_rel")},
        {"scope", std::string("gpu")}});
    Value *one = b.int_constant(1, scalar(Scalar::I64));
    op(OpCode::AtomicCas, {counts, one, one}, scalar(Scalar::I64),
       {{"sem", std::string("relaxed")}, {"scope", std::string("cta")}});
  }

  /// A 2-D tile of an i64 array, loaded and stored through a tensor
  /// descriptor.
  void descriptors(Value *counts) {
    Value *rows = b.int_constant(100, scalar(Scalar::I64));
    Value *one = b.int_constant(1, scalar(Scalar::I64));
    Value *offset = b.int_constant(-3, scalar(Scalar::I32));
    Value *tile = b.descriptor_load(counts, {rows, rows}, {rows, one},
                                    {offset, offset}, {4, 8});
    seen.insert(OpCode::DescriptorLoad);
    b.descriptor_store(counts, {rows, rows}, {rows, one}, {offset, offset},
                       tile);
    seen.insert(OpCode::DescriptorStore);
  }

  void collectives(Value *v) {
    Type f32 = scalar(Scalar::F32), i32 = scalar(Scalar::I32);
    // argmax over a 2-D block: two operands, a four-argument combine region.
    Value *m = op(OpCode::Reshape, {v}, block(Scalar::F32, {8, 8}));
    Value *ids = b.int_constant(0, block(Scalar::I32, {8, 8}));
    Operation *reduce = b.create(OpCode::Reduce, {m, ids},
                                 {block_of(f32, {8}), block_of(i32, {8})},
                                 {{"axis", int64_t{1}}});
    seen.insert(OpCode::Reduce);
    {
      Block *combine = reduce->add_region();
      Value *a = combine->add_argument(f32);
      Value *ai = combine->add_argument(i32);
      Value *c = combine->add_argument(f32);
      Value *ci = combine->add_argument(i32);
      Builder in(combine);
      Value *take_a = in.cmp("ge", a, c);
      Value *best = in.create_value(OpCode::Select, {take_a, a, c}, f32);
      Value *best_i = in.create_value(OpCode::Select, {take_a, ai, ci}, i32);
      in.create(OpCode::Yield, {best, best_i}, {});
    }
    Operation *scan = b.create(OpCode::Scan, {v}, {v->type()},
                               {{"axis", int64_t{0}}, {"reverse", int64_t{1}}});
    seen.insert(OpCode::Scan);
    {
      Block *combine = scan->add_region();
      Value *a = combine->add_argument(f32);
      Value *c = combine->add_argument(f32);
      Builder in(combine);
      in.create(OpCode::Yield, {in.binary(OpCode::Add, a, c)}, {});
    }
    Value *a = b.float_constant(1.0, block(Scalar::F16, {16, 32}));
    Value *bm = b.float_constant(2.0, block(Scalar::F16, {32, 16}));
    Value *acc = b.float_constant(0.0, block(Scalar::F32, {16, 16}));
    op(OpCode::Dot, {a, bm, acc}, acc->type(),
       {{"input_precision", std::string("ieee")}});
    Value *a3 = b.float_constant(1.0, block(Scalar::F32, {2, 16, 16}));
    op(OpCode::Dot, {a3, a3, a3}, a3->type());
  }

  void hints_and_debug(Value *idx, Value *mask) {
    op(OpCode::MultipleOf, {idx}, idx->type(),
       {{"values", std::vector<int64_t>{16}}});
    op(OpCode::MaxContiguous, {idx}, idx->type(),
       {{"values", std::vector<int64_t>{64}}});
    op(OpCode::MaxConstancy, {idx}, idx->type(),
       {{"values", std::vector<int64_t>{1}}});
    op(OpCode::ConvertLayout, {idx}, idx->type(),
       {{"layout", std::string("#blocked1")}});
    b.create(OpCode::Print, {idx, mask}, {},
             {{"prefix",
               std::string("idx \"quoted\"\\ tab\t nl\n ctl\x01 \xc3\xa9")},
              {"hex", int64_t{0}},
              {"weird key!", std::vector<int64_t>{}}});
    b.create(OpCode::Print, {}, {});
    seen.insert(OpCode::Print);
    b.create(OpCode::Assert, {mask}, {},
             {{"message", std::string("in bounds")}});
    seen.insert(OpCode::Assert);
  }

  /// for { if { for {} } else {} }, with carried values at each level.
  void control_flow(Value *v, Value *n) {
    Type i32 = scalar(Scalar::I32);
    Value *lb = b.int_constant(0, i32);
    Value *step = b.int_constant(1, i32);
    Operation *loop = b.create(OpCode::For, {lb, n, step, v}, {v->type()});
    seen.insert(OpCode::For);
    Block *body = loop->add_region();
    Value *iv = body->add_argument(i32);
    Value *carried = body->add_argument(v->type());
    Builder in(body);
    in.set_location({"loop.cpp", 40});
    Value *even = in.cmp("eq", in.binary(OpCode::Rem, iv, step), lb);
    Operation *branch = in.create(OpCode::If, {even}, {v->type()});
    seen.insert(OpCode::If);
    {
      Block *then_region = branch->add_region();
      Builder t(then_region);
      Value *i64 = t.create_value(OpCode::Cast, {iv}, scalar(Scalar::I64));
      Value *lb64 = t.int_constant(0, scalar(Scalar::I64));
      Operation *inner = t.create(OpCode::For, {lb64, i64, lb64}, {});
      Block *inner_body = inner->add_region();
      inner_body->add_argument(scalar(Scalar::I64));
      Builder ib(inner_body);
      ib.create(OpCode::Yield, {}, {});
      t.create(OpCode::Yield, {t.binary(OpCode::Add, carried, v)}, {});
    }
    {
      Block *else_region = branch->add_region();
      Builder e(else_region);
      e.create(OpCode::Yield, {carried}, {});
    }
    in.create(OpCode::Yield, {branch->result()}, {});
    seen.insert(OpCode::Yield);
    // An if without results (both regions just yield).
    Value *flag = b.int_constant(1, scalar(Scalar::I1));
    Operation *empty_if = b.create(OpCode::If, {flag}, {});
    for (int r = 0; r < 2; ++r) {
      Builder e(empty_if->add_region());
      e.create(OpCode::Yield, {}, {});
    }
  }

  Function f;
  Builder b;
};

TEST(PrinterParserTest, EveryOpcodeRoundTripsAndVerifies) {
  EveryOpBuilder builder;
  std::unique_ptr<Function> f = builder.build();
  ASSERT_NO_THROW(verify(*f)) << print(*f);
  for (int i = 0; i < kNumOpCodes; ++i)
    EXPECT_TRUE(builder.seen.count(static_cast<OpCode>(i)))
        << "the round-trip IR does not use '"
        << opcode_name(static_cast<OpCode>(i)) << "'";
  std::string text = expect_round_trip(*f);
  // Spot checks on what the text must keep.
  EXPECT_NE(text.find("func @every_op(%x: ptr<f32> {divisibility = 16}, "
                      "%smem: ptr<f16, 3>, %n: i32 {divisibility = 16}, "
                      "%arg3: ptr<i64>)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("loc(\"kernel.cpp\":3)"), std::string::npos);
  EXPECT_EQ(text.find("/home/user"), std::string::npos);
  EXPECT_NE(text.find("nan(0xfff0000000000123)"), std::string::npos);
  EXPECT_NE(text.find("{value = -0.0}"), std::string::npos);
  EXPECT_NE(text.find("{value = 5e-324}"), std::string::npos);
  EXPECT_NE(text.find("tensor<2x4x8xi16>"), std::string::npos);
  EXPECT_NE(text.find("\"weird key!\" = []"), std::string::npos);
  EXPECT_NE(text.find(":2 = split"), std::string::npos);
}

// A clone (ir/clone.h) prints as the original, keeps the full paths of
// locations and the argument facts, verifies, and shares no object with it.
TEST(PrinterParserTest, CloneIsTheSameFunctionInNewObjects) {
  EveryOpBuilder builder;
  std::unique_ptr<Function> f = builder.build();
  std::unique_ptr<Function> copy = clone(*f);
  EXPECT_EQ(print(*copy), print(*f));
  EXPECT_NO_THROW(verify(*copy));
  EXPECT_EQ(copy->name(), f->name());
  EXPECT_NE(copy->unique_id(), f->unique_id());
  ASSERT_EQ(copy->num_arguments(), f->num_arguments());
  for (size_t i = 0; i < f->num_arguments(); ++i) {
    EXPECT_NE(copy->argument(i), f->argument(i));
    EXPECT_EQ(copy->argument_info(i).divisibility,
              f->argument_info(i).divisibility);
  }
  std::set<const Value *> originals;
  f->walk([&](Operation &op) {
    for (const Value *r : op.results())
      originals.insert(r);
  });
  std::vector<Location> locations;
  f->walk([&](Operation &op) { locations.push_back(op.loc()); });
  size_t i = 0;
  copy->walk([&](Operation &op) {
    for (const Value *operand : op.operands())
      EXPECT_FALSE(originals.count(operand)) << op.describe();
    ASSERT_LT(i, locations.size());
    EXPECT_EQ(op.loc().file, locations[i].file);
    EXPECT_EQ(op.loc().line, locations[i].line);
    ++i;
  });
  EXPECT_EQ(i, locations.size());
  // Changing the copy leaves the original as it was.
  std::string before = print(*f);
  copy->walk([](Operation &op) { op.set_attr("gpu_note", int64_t{1}); });
  EXPECT_EQ(print(*f), before);
}

TEST(PrinterParserTest, ParsedAttributesAreBitExact) {
  EveryOpBuilder builder;
  std::unique_ptr<Function> f = builder.build();
  auto parsed = parse_function(print(*f));
  std::vector<Attribute> before, after;
  f->walk([&](Operation &op) {
    for (auto &[k, v] : op.attributes())
      before.push_back(v);
  });
  parsed->walk([&](Operation &op) {
    for (auto &[k, v] : op.attributes())
      after.push_back(v);
  });
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    ASSERT_EQ(before[i].index(), after[i].index()) << "attribute " << i;
    if (const auto *d = std::get_if<double>(&before[i]))
      EXPECT_EQ(std::bit_cast<uint64_t>(*d),
                std::bit_cast<uint64_t>(std::get<double>(after[i])))
          << "attribute " << i << ": " << *d;
    else
      EXPECT_TRUE(before[i] == after[i]) << "attribute " << i;
  }
}

TEST(PrinterParserTest, SmallFunctionPrintsExactly) {
  Function f("add");
  Value *x = f.add_argument(Type::pointer(Scalar::F32), {"x", 16});
  Value *n = f.add_argument(scalar(Scalar::I32), {"n", 1});
  Builder b(&f.body());
  b.set_location({"/tmp/add.cpp", 12});
  Value *pid = b.create_value(OpCode::ProgramId, {}, scalar(Scalar::I32),
                              {{"axis", int64_t{0}}});
  b.set_location({});
  Value *sum = b.binary(OpCode::Add, pid, n);
  Value *p = b.create_value(OpCode::AddPtr, {x, sum}, x->type());
  b.create(OpCode::Store, {p, b.float_constant(2.0, scalar(Scalar::F32))}, {});
  b.create(OpCode::Return, {}, {});
  EXPECT_EQ(print(f), "func @add(%x: ptr<f32> {divisibility = 16}, %n: i32) {\n"
                      "  %0 = program_id {axis = 0} : i32 loc(\"add.cpp\":12)\n"
                      "  %1 = add %0, %n : i32\n"
                      "  %2 = addptr %x, %1 : ptr<f32>\n"
                      "  %3 = constant {value = 2.0} : f32\n"
                      "  store %2, %3\n"
                      "  return\n"
                      "}\n");
  expect_round_trip(f);
}

TEST(PrinterParserTest, RegionsPrintHeadersAndNumberInTextOrder) {
  const char *text = "func @loop(%n: i32) {\n"
                     "  %0 = constant {value = 0} : i32\n"
                     "  %1 = constant {value = 1} : i32\n"
                     "  %2 = for %0, %n, %1, %0 : i32 {\n"
                     "  ^(%3: i32, %4: i32):\n"
                     "    %5 = add %4, %3 : i32\n"
                     "    yield %5\n"
                     "  }\n"
                     "  %6 = cmp %2, %n {predicate = \"lt\"} : i1\n"
                     "  if %6 {\n"
                     "    yield\n"
                     "  } {\n"
                     "    yield\n"
                     "  } loc(\"a.cpp\":9)\n"
                     "  return\n"
                     "}\n";
  auto f = parse_function(text);
  EXPECT_NO_THROW(verify(*f));
  EXPECT_EQ(print(*f), text);
}

TEST(PrinterParserTest, HandWrittenNamesAreRenumbered) {
  auto f = parse_function(R"(
    // Comments and free layout are fine; names are any %word.
    func @k(%p: ptr<f32>, %x: tensor<4x2xf32>) {
      %pid = program_id {axis = 1} : i32
      %halves:2 = split %x : tensor<4xf32>, tensor<4xf32>
      %sum = add %halves#0, %halves#1 : tensor<4xf32> return
    }
  )");
  EXPECT_NO_THROW(verify(*f));
  EXPECT_EQ(print(*f), "func @k(%p: ptr<f32>, %x: tensor<4x2xf32>) {\n"
                       "  %0 = program_id {axis = 1} : i32\n"
                       "  %1:2 = split %x : tensor<4xf32>, tensor<4xf32>\n"
                       "  %2 = add %1#0, %1#1 : tensor<4xf32>\n"
                       "  return\n"
                       "}\n");
}

TEST(PrinterParserTest, ArgumentNames) {
  auto f = parse_function(
      "func @k(%p: ptr<f32>, %arg1: i32, %7: i32, %q.v: i64) { return }");
  EXPECT_EQ(f->argument_info(0).name, "p");
  EXPECT_EQ(f->argument_info(1).name, ""); // %argI reads back as "no name"
  EXPECT_EQ(f->argument_info(2).name, "");
  EXPECT_EQ(f->argument_info(3).name, "q.v");
  EXPECT_EQ(print(*f), "func @k(%p: ptr<f32>, %arg1: i32, %arg2: i32, "
                       "%q.v: i64) {\n  return\n}\n");

  // Names the text cannot carry fall back to %argI, never to a clash.
  Function g("g");
  g.add_argument(scalar(Scalar::I32), {"x", 1});
  g.add_argument(scalar(Scalar::I32), {"x", 1});    // repeated
  g.add_argument(scalar(Scalar::I32), {"arg0", 1}); // another's reserved name
  g.add_argument(scalar(Scalar::I32), {"has space", 1});
  g.add_argument(scalar(Scalar::I32), {"9lives", 1});
  g.add_argument(scalar(Scalar::I32), {"arg5", 1}); // its own reserved name
  Builder(&g.body()).create(OpCode::Return, {}, {});
  EXPECT_EQ(print(g), "func @g(%x: i32, %arg1: i32, %arg2: i32, %arg3: i32, "
                      "%arg4: i32, %arg5: i32) {\n  return\n}\n");
  expect_round_trip(g);
}

TEST(PrinterParserTest, OddFunctionNamesAreQuoted) {
  Function f("my kernel\"1\"");
  Builder(&f.body()).create(OpCode::Return, {}, {});
  std::string text = expect_round_trip(f);
  EXPECT_EQ(text, "func @\"my kernel\\\"1\\\"\"() {\n  return\n}\n");
  EXPECT_EQ(parse_function(text)->name(), "my kernel\"1\"");
}

TEST(PrinterParserTest, LocationsKeepBaseNames) {
  auto f = parse_function(R"(func @k() {
    %0 = program_id {axis = 0} : i32 loc("/abs/dir/kernel.cpp":7)
    return loc("b.cpp":0)
  })");
  Operation *pid = f->body().ops().front().get();
  EXPECT_EQ(pid->loc().file, "kernel.cpp");
  EXPECT_EQ(pid->loc().line, 7);
  EXPECT_EQ(f->body().back()->loc().line, 0);
  EXPECT_NE(print(*f).find("loc(\"kernel.cpp\":7)"), std::string::npos);
}

TEST(PrinterParserTest, FloatsStayFloats) {
  auto f = parse_function(R"(func @k() {
    %0 = constant {value = 1.0} : f32
    %1 = constant {value = 1} : f32
    %2 = constant {value = 1e3} : f32
    %3 = constant {value = -inf} : f32
    %4 = constant {value = inf} : f32
    %5 = constant {value = nan} : f32
    %6 = constant {value = 2.5E-3} : f32
    return
  })");
  std::vector<Attribute> values;
  f->walk([&](Operation &op) {
    if (op.has_attr("value"))
      values.push_back(op.attributes().at("value"));
  });
  ASSERT_EQ(values.size(), 7u);
  EXPECT_EQ(std::get<double>(values[0]), 1.0);
  EXPECT_EQ(std::get<int64_t>(values[1]), 1);
  EXPECT_EQ(std::get<double>(values[2]), 1000.0);
  EXPECT_EQ(std::get<double>(values[3]),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(std::get<double>(values[4]),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(std::get<double>(values[5])));
  EXPECT_EQ(std::get<double>(values[6]), 2.5e-3);
  std::string text = print(*f);
  EXPECT_NE(text.find("{value = 1.0}"), std::string::npos) << text;
  EXPECT_NE(text.find("{value = 1}"), std::string::npos) << text;
  EXPECT_NE(text.find("{value = 1000.0}"), std::string::npos) << text;
  EXPECT_NE(text.find("{value = 0.0025}"), std::string::npos) << text;
  EXPECT_EQ(print(*parse_function(text)), text);
}

TEST(PrinterParserTest, PrintOperationForMessages) {
  auto f = parse_function(R"(func @k(%n: i32) {
    %a = constant {value = 0} : i32
    %b = constant {value = 1} : i32
    %l = for %a, %n, %b, %a : i32 {
    ^(%i: i32, %c: i32):
      %s = add %c, %i : i32 loc("k.cpp":4)
      yield %s
    }
    return
  })");
  Operation *loop = std::next(f->body().ops().begin(), 2)->get();
  Operation *add = loop->region(0)->ops().front().get();
  EXPECT_EQ(print(*add), "%5 = add %4, %3 : i32 loc(\"k.cpp\":4)");
  EXPECT_EQ(print(*loop), "%2 = for %0, %arg0, %1, %0 : i32 {\n"
                          "^(%3: i32, %4: i32):\n"
                          "  %5 = add %4, %3 : i32 loc(\"k.cpp\":4)\n"
                          "  yield %5\n"
                          "}");
  // A detached op still prints, numbering from itself.
  auto detached = loop->region(0)->remove(add);
  EXPECT_EQ(print(*detached), "%0 = add <<unknown value>>, <<unknown value>> "
                              ": i32 loc(\"k.cpp\":4)");
}

TEST(PrinterParserTest, ModuleHoldsSeveralFunctions) {
  auto functions = parse_module(R"(
    func @a() { return }
    func @b(%x: i32) {
      %0 = add %x, %x : i32
      return
    }
  )");
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[0]->name(), "a");
  EXPECT_EQ(functions[1]->name(), "b");
  EXPECT_TRUE(parse_module("  // nothing\n").empty());
  EXPECT_PARSE_ERROR("", "");
  try {
    parse_function("func @a() { return }\nfunc @b() { return }");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "2:1: expected exactly one function, but more text "
                           "follows (parse_module reads several)");
  }
  try {
    parse_function("  ");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("1:3: expected a function"),
              std::string::npos)
        << e.what();
  }
}

TEST(PrinterParserTest, ParseErrors) {
  EXPECT_PARSE_ERROR("func @k() {\n  %0 = frobnicate : i32\n}",
                     "2:8: unknown op 'frobnicate'");
  EXPECT_PARSE_ERROR("func @k() {\n  %0 = add %1, %1 : i32\n}",
                     "2:12: use of undefined value %1");
  EXPECT_PARSE_ERROR("func @k() {\n  %0 = constant {value = 1} : i33\n}",
                     "2:31: bad type 'i33'");
  EXPECT_PARSE_ERROR("func @k(%x: tensor<4xq8>) { return }",
                     "1:13: bad type 'tensor<4xq8>'");
  EXPECT_PARSE_ERROR("func @k(%x: tensor<2x2x2x2xf32>) { return }",
                     "bad type 'tensor<2x2x2x2xf32>'");
  EXPECT_PARSE_ERROR("func @k(%x: tensor<4xf32) { return }", "bad type");
  EXPECT_PARSE_ERROR("func @k(%x: i32) {\n  %0:2 = split %x : i32\n}",
                     "2:10: wrong count: 'split' defines 2 results but has "
                     "1 result type");
  EXPECT_PARSE_ERROR("func @k(%x: i32) {\n  %0 = add %x, %x : i32, i32\n}",
                     "2:24: wrong count: more than 1 result type");
  EXPECT_PARSE_ERROR("func @k(%x: i32) {\n  %0 = add %x, %x\n}",
                     "2:8: wrong count: 'add' defines 1 result but has 0 "
                     "result types");
  EXPECT_PARSE_ERROR("func @k(%x: i32) {\n  store %x, %x : i32\n}",
                     "2:16: 'store' defines no results");
  EXPECT_PARSE_ERROR("func @k(%x: i32) {\n  %x = add %x, %x : i32\n}",
                     "2:3: redefinition of %x");
  EXPECT_PARSE_ERROR("func @k(%x: i32) {\n  %0:0 = add %x, %x : i32\n}",
                     "2:6: a result count must be at least 1");
  EXPECT_PARSE_ERROR("func @k(%x: tensor<4x2xf32>) {\n"
                     "  %0:2 = split %x : tensor<4xf32>, tensor<4xf32>\n"
                     "  %1 = add %0, %0 : tensor<4xf32>\n}",
                     "3:12: %0 names 2 results; expected one of %0#0 to %0#1");
  EXPECT_PARSE_ERROR("func @k(%x: tensor<4x2xf32>) {\n"
                     "  %0:2 = split %x : tensor<4xf32>, tensor<4xf32>\n"
                     "  %1 = add %0#2, %0#0 : tensor<4xf32>\n}",
                     "3:12: %0#2 is out of range: %0 has 2 results");
  EXPECT_PARSE_ERROR("func @k(%c: i1) {\n"
                     "  if %c {\n    %0 = constant {value = 1} : i32\n"
                     "    yield\n  } {\n    yield %0\n  }\n  return\n}",
                     "6:11: %0 is defined inside a region that does not "
                     "enclose this use");
  EXPECT_PARSE_ERROR("func @k(%n: i32) {\n"
                     "  %0 = for %n, %n, %n : i32 {\n  ^(%i: i32):\n"
                     "    yield %0\n  }\n  return\n}",
                     "4:11: use of undefined value %0");
  EXPECT_PARSE_ERROR("func @k() {\n  print {prefix = \"abc}\n}",
                     "2:19: unterminated string");
  EXPECT_PARSE_ERROR("func @k() {\n  print {prefix = \"\\q\"}\n}",
                     "unknown escape '\\q'");
  EXPECT_PARSE_ERROR("func @k() {\n  print {hex = 1, hex = 0}\n}",
                     "2:19: duplicate attribute 'hex'");
  EXPECT_PARSE_ERROR(
      "func @k() {\n  %0 = constant {value = 99999999999999999999} : i64\n}",
      "does not fit in 64 bits");
  EXPECT_PARSE_ERROR("func @k() {\n  %0 = constant {value = [1, 2.5]} : i64\n}",
                     "expected an integer in the list");
  EXPECT_PARSE_ERROR("func @k() {\n  %0 = constant {value = nan(0x1)} : f64\n}",
                     "expected the 64-bit pattern of a NaN");
  EXPECT_PARSE_ERROR("func @k() {\n  %0 = constant {value = foo} : i32\n}",
                     "2:26: expected an attribute value");
  EXPECT_PARSE_ERROR("func @k() {\n  return loc(\"a.cpp\" 3)\n}",
                     "2:22: expected ':' between the file and the line");
  EXPECT_PARSE_ERROR("func @k(%x: i32 {align = 4}) { return }",
                     "1:18: unknown argument attribute 'align'");
  EXPECT_PARSE_ERROR("func @k() {\n  return\n", "1:11: unclosed function body");
  EXPECT_PARSE_ERROR("func @k(%c: i1) {\n  if %c {\n    yield\n",
                     "2:9: unclosed region of 'if'");
  EXPECT_PARSE_ERROR("fun @k() { return }", "1:1: expected 'func', got 'fun'");
  EXPECT_PARSE_ERROR("func k() { return }",
                     "1:6: expected a function name (@name), got 'k'");
  EXPECT_PARSE_ERROR("func @k() {\n  return ?\n}",
                     "2:10: unexpected character '?'");
  EXPECT_PARSE_ERROR("func @k() { ^(%a: i32): return }",
                     "1:13: the function body takes no '^(...)' header");
}

} // namespace
} // namespace blocc::ir
