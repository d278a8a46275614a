#include "backends/nvptx/gpu_math.h"

#include "backends/llvm/math_implementations.h"
#include "ir/error.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <vector>

namespace blocc::nvptx {

namespace math = llvm_backend::math;

namespace {

// The bits of 2/pi in 64-bit words, most significant first: word 0 holds
// the bits of weight 2^-1 .. 2^-64 (tools/math/two_over_pi_bits.py 19).
constexpr uint64_t kTwoOverPi[] = {
    0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
    0xfe5163abdebbc561ull, 0xb7246e3a424dd2e0ull, 0x06492eea09d1921cull,
    0xfe1deb1cb129a73eull, 0xe88235f52ebb4484ull, 0xe99c7026b45f7e41ull,
    0x3991d639835339f4ull, 0x9c845f8bbdf9283bull, 0x1ff897ffde05980full,
    0xef2f118b5a0a6d1full, 0x6d367ecf27cb09b7ull, 0x4f463f669e5fea2dull,
    0x7527bac7ebe5f17bull, 0x3d0739f78a5292eaull, 0x6bfb5fb11f8d5d08ull,
    0x56033046fc7b6babull,
};

/// The table of 2/pi's bits behind one zero word (the integer bits, for
/// windows starting before the binary point), once per module.
llvm::GlobalVariable *two_over_pi_table(llvm::Module &module,
                                        unsigned address_space) {
  const char *name = "blocc_two_over_pi";
  if (llvm::GlobalVariable *existing = module.getGlobalVariable(name, true))
    return existing;
  std::vector<uint64_t> words = {0};
  words.insert(words.end(), std::begin(kTwoOverPi), std::end(kTwoOverPi));
  llvm::Constant *bits =
      llvm::ConstantDataArray::get(module.getContext(), words);
  auto *table = new llvm::GlobalVariable(
      module, bits->getType(), true, llvm::GlobalValue::InternalLinkage, bits,
      name, nullptr, llvm::GlobalValue::NotThreadLocal, address_space);
  table->setAlignment(llvm::Align(8));
  return table;
}

void require_end_of_block(llvm::IRBuilderBase &b, const char *what) {
  if (b.GetInsertPoint() != b.GetInsertBlock()->end())
    throw Error(std::string("internal: ") + what +
                " must be emitted at the end of a block");
}

/// The steps of Payne and Hanek's reduction on 64-bit limbs.
class PayneHanek {
public:
  PayneHanek(math::FloatLanes &f, unsigned address_space)
      : f_(f), b_(f.b), f64_(f.is_f64()), p_(f.mantissa_bits()),
        words_(f64_ ? 3 : 2), address_space_(address_space),
        i64_(b_.getInt64Ty()), i128_(b_.getInt128Ty()) {}

  math::TrigReduction reduce(llvm::Value *ax) {
    // ax = M 2^E with the integer significand M < 2^(p+1).
    llvm::Value *bits = b_.CreateZExt(f_.to_bits(ax), i64_);
    llvm::Value *field = b_.CreateLShr(bits, p_);
    llvm::Value *significand =
        b_.CreateOr(b_.CreateAnd(bits, c64((uint64_t{1} << p_) - 1)),
                    c64(uint64_t{1} << p_));
    std::vector<llvm::Value *> product =
        low_limbs(significand, window_of_two_over_pi(field));
    // Its top two bits are j mod 4; the fraction below them, moved to the
    // top, is a signed fraction: from 1/2 on, r is negative and j one more.
    llvm::Value *j = b_.CreateLShr(product[words_ - 1], 62);
    std::vector<llvm::Value *> fraction;
    for (int k = 0; k < words_; ++k)
      fraction.push_back(
          funnel(product[k], k > 0 ? product[k - 1] : c64(0), c64(2)));
    llvm::Value *negative = b_.CreateICmpSLT(fraction[words_ - 1], c64(0));
    j = b_.CreateAdd(j, b_.CreateZExt(negative, i64_));
    negate_where(negative, fraction);
    auto [hi, lo] = double_double(fraction);
    return times_half_pi(hi, lo, negative, j);
  }

private:
  /// The bits of 2/pi of weight 2^-i for i < E - 1 contribute multiples of
  /// 4 to x 2/pi: the window starts at bit E - 1, which is E - 2 + 64
  /// bits into the table (behind its zero word). Most significant first.
  std::vector<llvm::Value *> window_of_two_over_pi(llvm::Value *field) {
    const int bias = f64_ ? 1023 : 127;
    llvm::Value *start = b_.CreateAdd(field, c64(uint64_t(64 - 2 - bias - p_)));
    llvm::Value *first_word = b_.CreateLShr(start, 6);
    llvm::Value *shift = b_.CreateAnd(start, c64(63));
    llvm::GlobalVariable *table =
        two_over_pi_table(*b_.GetInsertBlock()->getModule(), address_space_);
    auto table_word = [&](int k) {
      llvm::Value *index = b_.CreateAdd(first_word, c64(uint64_t(k)));
      return b_.CreateLoad(i64_, b_.CreateGEP(i64_, table, index));
    };
    std::vector<llvm::Value *> window;
    for (int k = 0; k < words_; ++k)
      window.push_back(funnel(table_word(k), table_word(k + 1), shift));
    return window;
  }

  /// x 2/pi = M window 2^(2 - 64 words) modulo 4: the product's low limbs
  /// (least significant first) hold all that is left.
  std::vector<llvm::Value *>
  low_limbs(llvm::Value *significand,
            const std::vector<llvm::Value *> &window) {
    std::vector<llvm::Value *> product;
    llvm::Value *carry = llvm::ConstantInt::get(i128_, 0);
    llvm::Value *wide_significand = b_.CreateZExt(significand, i128_);
    for (int k = 0; k < words_; ++k) {
      llvm::Value *sum = b_.CreateAdd(
          b_.CreateMul(wide_significand,
                       b_.CreateZExt(window[words_ - 1 - k], i128_)),
          carry);
      product.push_back(b_.CreateTrunc(sum, i64_));
      carry = b_.CreateLShr(sum, 64);
    }
    return product;
  }

  /// |fraction|: two's complement negation where `negative`.
  void negate_where(llvm::Value *negative, std::vector<llvm::Value *> &limbs) {
    llvm::Value *flip = b_.CreateSExt(negative, i64_);
    llvm::Value *carry = b_.CreateZExt(negative, i128_);
    for (int k = 0; k < words_; ++k) {
      llvm::Value *sum = b_.CreateAdd(
          b_.CreateZExt(b_.CreateXor(limbs[k], flip), i128_), carry);
      limbs[k] = b_.CreateTrunc(sum, i64_);
      carry = b_.CreateLShr(sum, 64);
    }
  }

  /// The fraction's leading 128 bits from the first set one, as a
  /// double-double (hi: the leading 53 bits exactly, lo: the rest). No
  /// argument comes within 2^-64 of a multiple of pi/2 (2^-62 for f64,
  /// 2^-32 for f32), so the first set bit lies in the top limb or the
  /// next.
  std::pair<llvm::Value *, llvm::Value *>
  double_double(const std::vector<llvm::Value *> &fraction) {
    llvm::Value *top_zero = b_.CreateICmpEQ(fraction[words_ - 1], c64(0));
    auto limb = [&](int k) { return k >= 0 ? fraction[k] : c64(0); };
    llvm::Value *top =
        b_.CreateSelect(top_zero, limb(words_ - 2), limb(words_ - 1));
    llvm::Value *next =
        b_.CreateSelect(top_zero, limb(words_ - 3), limb(words_ - 2));
    llvm::Value *rest =
        b_.CreateSelect(top_zero, limb(words_ - 4), limb(words_ - 3));
    llvm::Value *zeros =
        b_.CreateIntrinsic(llvm::Intrinsic::ctlz, {i64_}, {top, b_.getFalse()});
    llvm::Value *high = funnel(top, next, zeros);
    llvm::Value *low = funnel(next, rest, zeros);
    // fraction = (high + low 2^-64) 2^-(64 + zeros + 64 top_zero).
    llvm::Type *f64_type = b_.getDoubleTy();
    llvm::Value *hi =
        b_.CreateUIToFP(b_.CreateAnd(high, c64(~uint64_t{0x7ff})), f64_type);
    llvm::Value *lo = b_.CreateFAdd(
        b_.CreateUIToFP(b_.CreateAnd(high, c64(0x7ff)), f64_type),
        b_.CreateFMul(b_.CreateUIToFP(low, f64_type), d(0x1p-64)));
    llvm::Value *exponent = b_.CreateSub(
        c64(1023 - 64),
        b_.CreateAdd(zeros, b_.CreateSelect(top_zero, c64(64), c64(0))));
    llvm::Value *scale = b_.CreateBitCast(b_.CreateShl(exponent, 52), f64_type);
    return {b_.CreateFMul(hi, scale), b_.CreateFMul(lo, scale)};
  }

  /// r = fraction pi/2: hi pi/2 with its rounding error (an exact fma),
  /// then the small products; pi/2 = kHigh + kLow to 107 bits. Negated
  /// where the fraction was; f32 takes r_high + r_low from the
  /// double-double, as math_trig.cpp's f32 reduction hands it on.
  math::TrigReduction times_half_pi(llvm::Value *hi, llvm::Value *lo,
                                    llvm::Value *negative, llvm::Value *j) {
    llvm::Type *f64_type = b_.getDoubleTy();
    const double kHigh = 0x1.921fb54442d18p+0, kLow = 0x1.1a62633145c07p-54;
    llvm::Value *r_high = b_.CreateFMul(hi, d(kHigh));
    llvm::Value *error =
        b_.CreateIntrinsic(llvm::Intrinsic::fma, {f64_type},
                           {hi, d(kHigh), b_.CreateFNeg(r_high)});
    llvm::Value *r_rest =
        b_.CreateFAdd(error, b_.CreateFAdd(b_.CreateFMul(hi, d(kLow)),
                                           b_.CreateFMul(lo, d(kHigh))));
    llvm::Value *r = b_.CreateFAdd(r_high, r_rest);
    llvm::Value *r_low = b_.CreateFSub(r_rest, b_.CreateFSub(r, r_high));
    r = b_.CreateSelect(negative, b_.CreateFNeg(r), r);
    r_low = b_.CreateSelect(negative, b_.CreateFNeg(r_low), r_low);
    if (f64_)
      return {r, r_low, j};
    llvm::Value *r32 = b_.CreateFPTrunc(r, f_.type);
    llvm::Value *r32_low = b_.CreateFPTrunc(
        b_.CreateFAdd(b_.CreateFSub(r, b_.CreateFPExt(r32, f64_type)), r_low),
        f_.type);
    return {r32, r32_low, b_.CreateTrunc(j, f_.bits)};
  }

  llvm::Value *c64(uint64_t v) { return llvm::ConstantInt::get(i64_, v); }
  llvm::Value *d(double v) {
    return llvm::ConstantFP::get(b_.getDoubleTy(), v);
  }
  llvm::Value *funnel(llvm::Value *high, llvm::Value *low, llvm::Value *s) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fshl, {i64_}, {high, low, s});
  }

  math::FloatLanes &f_;
  llvm::IRBuilderBase &b_;
  const bool f64_;
  const int p_;
  const int words_; // of the window of 2/pi
  const unsigned address_space_;
  llvm::Type *i64_, *i128_;
};

/// |x| = j pi/2 + r by Payne and Hanek's method, for finite ax = |x| of
/// 2^20 or more (see gpu_math.h).
math::TrigReduction payne_hanek(math::FloatLanes &f, llvm::Value *ax,
                                unsigned address_space) {
  return PayneHanek(f, address_space).reduce(ax);
}

/// The exponent e of finite v > 0 (2^e <= v < 2^(e+1)), subnormals
/// included, as an integer of v's width.
llvm::Value *exponent_of(math::FloatLanes &f, llvm::Value *v) {
  llvm::IRBuilderBase &b = f.b;
  const int p = f.mantissa_bits();
  const int width = f.is_f64() ? 64 : 32;
  const int bias = f.is_f64() ? 1023 : 127;
  llvm::Value *bits = f.to_bits(v);
  llvm::Value *field = b.CreateLShr(bits, p);
  llvm::Value *normal = b.CreateSub(field, f.i(bias));
  // A subnormal is bits 2^(1 - bias - p): its leading bit decides.
  llvm::Value *leading = b.CreateSub(
      f.i(width - 1),
      b.CreateIntrinsic(llvm::Intrinsic::ctlz, {f.bits}, {bits, b.getFalse()}));
  llvm::Value *subnormal = b.CreateAdd(leading, f.i(1 - bias - p));
  return b.CreateSelect(b.CreateICmpEQ(field, f.i(0)), subnormal, normal);
}

} // namespace

llvm::Value *emit_sin_cos(llvm::IRBuilderBase &b, llvm::Value *x, bool cosine,
                          unsigned table_address_space) {
  require_end_of_block(b, "sin and cos");
  math::FloatLanes lanes = math::FloatLanes::of(b, x);
  math::HugeTrigReduction huge =
      [table_address_space](math::FloatLanes &f, llvm::Value *is_huge,
                            llvm::Value *ax,
                            const math::TrigReduction &others) {
        llvm::IRBuilderBase &b = f.b;
        llvm::LLVMContext &context = b.getContext();
        llvm::BasicBlock *before = b.GetInsertBlock();
        llvm::Function *function = before->getParent();
        auto *slow = llvm::BasicBlock::Create(context, "trig.huge", function);
        auto *join = llvm::BasicBlock::Create(context, "trig.join", function);
        b.CreateCondBr(is_huge, slow, join,
                       llvm::MDBuilder(context).createUnlikelyBranchWeights());
        b.SetInsertPoint(slow);
        math::TrigReduction reduced = payne_hanek(f, ax, table_address_space);
        llvm::BasicBlock *slow_end = b.GetInsertBlock();
        b.CreateBr(join);
        b.SetInsertPoint(join);
        auto merge = [&](llvm::Value *fast, llvm::Value *slow_value) {
          llvm::PHINode *phi = b.CreatePHI(fast->getType(), 2);
          phi->addIncoming(fast, before);
          phi->addIncoming(slow_value, slow_end);
          return phi;
        };
        return math::TrigReduction{merge(others.r, reduced.r),
                                   merge(others.r_low, reduced.r_low),
                                   merge(others.j, reduced.j)};
      };
  return math::sin_cos(lanes, x, cosine, &huge);
}

llvm::Value *emit_fmod(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y) {
  require_end_of_block(b, "fmod");
  math::FloatLanes f = math::FloatLanes::of(b, x);
  const int p = f.mantissa_bits();
  llvm::Value *ax = f.abs(x), *ay = f.abs(y);
  llvm::Value *is_nan = b.CreateOr(
      b.CreateOr(b.CreateFCmpOEQ(ay, f.c(0.0)), b.CreateFCmpOEQ(ax, f.inf())),
      b.CreateFCmpUNO(x, y));
  llvm::Value *y_exponent = exponent_of(f, ay);

  llvm::LLVMContext &context = b.getContext();
  llvm::BasicBlock *before = b.GetInsertBlock();
  llvm::Function *function = before->getParent();
  auto *step = llvm::BasicBlock::Create(context, "fmod.step", function);
  auto *done = llvm::BasicBlock::Create(context, "fmod.done", function);
  b.CreateCondBr(b.CreateAnd(b.CreateNot(is_nan), b.CreateFCmpOGE(ax, ay)),
                 step, done);
  // a -= q |y| 2^k, with the largest k >= 0 that keeps q below 2^(p+1).
  b.SetInsertPoint(step);
  llvm::PHINode *a = b.CreatePHI(f.type, 2);
  a->addIncoming(ax, before);
  llvm::Value *k = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::smax,
      b.CreateSub(b.CreateSub(exponent_of(f, a), y_exponent), f.i(p)), f.i(0));
  llvm::Value *divisor = f.scale(ay, b.CreateSIToFP(k, f.type));
  llvm::Value *q =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, f.div(a, divisor));
  llvm::Value *next =
      b.CreateIntrinsic(llvm::Intrinsic::fma, {f.type}, {f.neg(q), divisor, a});
  // The division rounded up to q: one divisor too many.
  next = f.select(b.CreateFCmpOLT(next, f.c(0.0)), f.add(next, divisor), next);
  a->addIncoming(next, step);
  b.CreateCondBr(b.CreateFCmpOGE(next, ay), step, done);

  b.SetInsertPoint(done);
  llvm::PHINode *remainder = b.CreatePHI(f.type, 2);
  remainder->addIncoming(ax, before);
  remainder->addIncoming(next, step);
  // A NaN operand comes back (quiet); y = 0 and infinite x give a NaN.
  llvm::Value *nan = f.select(b.CreateFCmpUNO(x, y), f.add(x, y), f.nan());
  return f.select(is_nan, nan, f.copysign(remainder, x));
}

} // namespace blocc::nvptx
