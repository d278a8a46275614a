// Element-type mistakes: bit operations on floats, float math on integers,
// arithmetic on fp8 storage types, conditions that are not boolean.
#include "error/support.h"

namespace bl = blocc;
using namespace blocc::error_testing;
using ::testing::HasSubstr;

namespace {

// Each kernel loads 16 floats, makes one type mistake and stores a result.

TEST(DtypeErrors, BitwiseAndOnFloats) {
  static int line;
  auto k = bl::kernel("and_floats", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + offs);
    auto bits = (line = __LINE__, v & v);
    bl::store(out + offs, bits);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator& is not defined for tensor<16xf32> "
                             "and tensor<16xf32>"));
  EXPECT_THAT(msg, HasSubstr("it needs integer operands"));
  EXPECT_THAT(msg, HasSubstr("bl::cast"));
}

TEST(DtypeErrors, BitwiseOrOfFloatAndWeakInteger) {
  static int line;
  auto k = bl::kernel("or_floats", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + offs);
    auto bits = (line = __LINE__, v | 1);
    bl::store(out + offs, bits);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator| is not defined for tensor<16xf32> "
                             "and integer constant 1"));
}

TEST(DtypeErrors, ShiftLeftOnFloats) {
  static int line;
  auto k = bl::kernel("shl_floats", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + offs);
    auto shifted = (line = __LINE__, v << 2);
    bl::store(out + offs, shifted);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator<< is not defined for tensor<16xf32>"));
  EXPECT_THAT(msg, HasSubstr("it needs integer operands"));
}

TEST(DtypeErrors, ShiftRightOnBooleans) {
  static int line;
  auto k = bl::kernel("shr_bools", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto positive = bl::load(x + offs) > 0;
    auto shifted = (line = __LINE__, positive >> positive);
    bl::store(out + offs, shifted);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator>> is not defined for tensor<16xi1>"));
}

TEST(DtypeErrors, BitwiseNotOnFloats) {
  static int line;
  auto k = bl::kernel("not_floats", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + offs);
    auto flipped = (line = __LINE__, ~v);
    bl::store(out + offs, flipped);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator~ needs an integer operand, got "
                             "tensor<16xf32>"));
}

TEST(DtypeErrors, ExpOnIntegers) {
  static int line;
  auto k = bl::kernel("exp_ints", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto e = (line = __LINE__, bl::exp(offs));
    bl::store(out + offs, e);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::exp needs a floating-point operand, got "
                             "tensor<16xi32>"));
  EXPECT_THAT(msg, HasSubstr("convert it with bl::cast(x, bl::float32)"));
}

TEST(DtypeErrors, Exp2FlushingSubnormalsOfF16) {
  static int line;
  auto k =
      bl::kernel("exp2_flush_f16", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto offs = bl::arange(0, 16);
        auto v = bl::cast(bl::load(x + offs), bl::float16);
        auto p = (line = __LINE__, bl::exp2(v, bl::Subnormals::Flush));
        bl::store(out + offs, p);
      });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::exp2 with bl::Subnormals::Flush needs f32, "
                             "got tensor<16xf16>"));
}

TEST(DtypeErrors, SqrtOnIntegerScalar) {
  static int line;
  auto k = bl::kernel("sqrt_int", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto root = (line = __LINE__, bl::sqrt(bl::program_id(0)));
    bl::store(out + bl::arange(0, 16), root);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg,
              HasSubstr("bl::sqrt needs a floating-point operand, got i32"));
}

TEST(DtypeErrors, Fp8Addition) {
  static int line;
  auto k = bl::kernel("fp8_add", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto q = bl::cast(bl::load(x + offs), bl::float8e4m3);
    auto sum = (line = __LINE__, q + q);
    bl::store(out + offs, sum);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator+: fp8 is a storage type"));
  EXPECT_THAT(msg, HasSubstr("convert to float16 or float32 with bl::cast "
                             "before arithmetic"));
}

TEST(DtypeErrors, Fp8TimesWeakConstant) {
  static int line;
  auto k = bl::kernel("fp8_mul", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto q = bl::cast(bl::load(x + offs), bl::float8e5m2);
    auto scaled = (line = __LINE__, q * 2);
    bl::store(out + offs, scaled);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("operator*: fp8 is a storage type"));
}

TEST(DtypeErrors, Fp8Math) {
  static int line;
  auto k = bl::kernel("fp8_exp", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto q = bl::cast(bl::load(x + offs), bl::float8e4m3);
    auto e = (line = __LINE__, bl::exp(q));
    bl::store(out + offs, e);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::exp: fp8 is a storage type"));
}

TEST(DtypeErrors, Fp8Negation) {
  static int line;
  auto k = bl::kernel("fp8_neg", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto q = bl::cast(bl::load(x + offs), bl::float8e4m3);
    auto negated = (line = __LINE__, -q);
    bl::store(out + offs, negated);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("fp8 is a storage type"));
}

TEST(DtypeErrors, Fp8Comparison) {
  static int line;
  auto k = bl::kernel("fp8_cmp", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto q = bl::cast(bl::load(x + offs), bl::float8e4m3);
    auto positive = (line = __LINE__, q > 0);
    bl::store(out + offs, positive);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("fp8 is a storage type"));
}

TEST(DtypeErrors, WhereWithIntegerCondition) {
  static int line;
  auto k = bl::kernel("where_int", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + offs);
    auto picked = (line = __LINE__, bl::where(offs, v, 0.f));
    bl::store(out + offs, picked);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::where needs a boolean (i1) condition, got "
                             "tensor<16xi32>"));
  EXPECT_THAT(msg, HasSubstr("compare it, e.g. x != 0"));
}

TEST(DtypeErrors, CdivOnFloats) {
  static int line;
  auto k = bl::kernel("cdiv_floats", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto v = bl::load(x + offs);
    auto q = (line = __LINE__, bl::cdiv(v, 4));
    bl::store(out + offs, q);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::cdiv needs integer operands, got "
                             "tensor<16xf32>"));
}

TEST(DtypeErrors, UmulhiOnFloats) {
  static int line;
  auto k =
      bl::kernel("umulhi_floats", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto offs = bl::arange(0, 16);
        auto v = bl::load(x + offs);
        auto hi = (line = __LINE__, bl::umulhi(v, v));
        bl::store(out + offs, hi);
      });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::umulhi is not defined for tensor<16xf32>"));
}

TEST(DtypeErrors, FmaOnIntegers) {
  static int line;
  auto k = bl::kernel("fma_ints", [](bl::Ptr<float> x, bl::Ptr<float> out) {
    auto offs = bl::arange(0, 16);
    auto r = (line = __LINE__, bl::fma(offs, offs, offs));
    bl::store(out + offs, r);
  });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::fma needs floating-point operands"));
}

TEST(DtypeErrors, BitcastBetweenWidths) {
  static int line;
  auto k =
      bl::kernel("bitcast_width", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto offs = bl::arange(0, 16);
        auto v = bl::load(x + offs);
        auto bits = (line = __LINE__, bl::bitcast(v, bl::int16));
        bl::store(out + offs, bits);
      });
  std::string msg = run_x_out(k, 16);
  EXPECT_THAT(msg, HasSubstr(at(line)));
  EXPECT_THAT(msg, HasSubstr("bl::bitcast: tensor<16xf32> and i16 differ in "
                             "width"));
  EXPECT_THAT(msg, HasSubstr("same number of bits"));
}

} // namespace
