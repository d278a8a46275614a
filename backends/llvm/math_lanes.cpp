#include "backends/llvm/math_lanes.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <numeric>
#include <string>
#include <vector>

namespace blocc::llvm_backend::math {

namespace {

llvm::Type *same_shape(llvm::Type *element, llvm::Type *like) {
  if (auto *v = llvm::dyn_cast<llvm::VectorType>(like))
    return llvm::VectorType::get(element, v->getElementCount());
  return element;
}

/// The target features of the function being built (those the CPU backend
/// puts on its kernels); empty where none are named.
llvm::StringRef target_features(llvm::IRBuilderBase &b) {
  llvm::BasicBlock *block = b.GetInsertBlock();
  llvm::Function *function = block ? block->getParent() : nullptr;
  if (!function || !function->hasFnAttribute("target-features"))
    return {};
  return function->getFnAttribute("target-features").getValueAsString();
}

bool is_x86(llvm::StringRef features) { return features.contains("sse"); }

bool names_feature(llvm::StringRef features, llvm::StringRef feature) {
  return features.contains(("+" + feature + ",").str()) ||
         features.ends_with(("+" + feature).str());
}

/// Whether the x86 target features of the function being built include
/// `feature`; true for other targets and for code with no features named
/// (for features whose absence only x86 has to work around).
bool x86_target_has(llvm::IRBuilderBase &b, llvm::StringRef feature) {
  llvm::StringRef features = target_features(b);
  return !is_x86(features) || names_feature(features, feature);
}

/// The x86 VSCALEF intrinsic for vectors of `bits` bits of `element`, or
/// not_intrinsic where the function's target lacks it: AVX-512 for 512
/// bits, with AVX512VL for 128 and 256 bits.
llvm::Intrinsic::ID scalef_intrinsic(llvm::IRBuilderBase &b,
                                     llvm::Type *element, unsigned bits) {
  llvm::StringRef features = target_features(b);
  if (!is_x86(features) || !names_feature(features, "avx512f") ||
      (bits < 512 && !names_feature(features, "avx512vl")))
    return llvm::Intrinsic::not_intrinsic;
  bool f64 = element->isDoubleTy();
  switch (bits) {
  case 128:
    return f64 ? llvm::Intrinsic::x86_avx512_mask_scalef_pd_128
               : llvm::Intrinsic::x86_avx512_mask_scalef_ps_128;
  case 256:
    return f64 ? llvm::Intrinsic::x86_avx512_mask_scalef_pd_256
               : llvm::Intrinsic::x86_avx512_mask_scalef_ps_256;
  case 512:
    return f64 ? llvm::Intrinsic::x86_avx512_mask_scalef_pd_512
               : llvm::Intrinsic::x86_avx512_mask_scalef_ps_512;
  default:
    return llvm::Intrinsic::not_intrinsic;
  }
}

/// p * 2^floor(n), rounded once (VSCALEF, AVX-512), for vectors of 128 or
/// 256 bits or of whole 512-bit pieces; nullptr where the target or the
/// shape has no such instruction.
llvm::Value *x86_scalef(llvm::IRBuilderBase &b, llvm::Value *p,
                        llvm::Value *n) {
  auto *type = llvm::dyn_cast<llvm::FixedVectorType>(p->getType());
  if (!type)
    return nullptr;
  llvm::Type *element = type->getElementType();
  unsigned element_bits = element->getScalarSizeInBits();
  unsigned bits = type->getNumElements() * element_bits;
  unsigned piece_bits = bits <= 256 ? bits : 512;
  if (bits % piece_bits != 0)
    return nullptr;
  llvm::Intrinsic::ID id = scalef_intrinsic(b, element, piece_bits);
  if (id == llvm::Intrinsic::not_intrinsic)
    return nullptr;
  unsigned lanes = piece_bits / element_bits;
  llvm::Value *all_lanes = b.getIntN(lanes < 8 ? 8 : lanes, -1);
  std::vector<llvm::Value *> pieces;
  for (unsigned first = 0; first < type->getNumElements(); first += lanes) {
    auto piece = [&](llvm::Value *v) {
      if (lanes == type->getNumElements())
        return v;
      std::vector<int> indices(lanes);
      std::iota(indices.begin(), indices.end(), static_cast<int>(first));
      return b.CreateShuffleVector(v, indices);
    };
    llvm::Value *pp = piece(p);
    std::vector<llvm::Value *> args = {pp, piece(n), pp, all_lanes};
    if (piece_bits == 512)
      args.push_back(b.getInt32(4)); // _MM_FROUND_CUR_DIRECTION
    pieces.push_back(b.CreateIntrinsic(id, {}, args));
  }
  return pieces.size() == 1 ? pieces[0] : llvm::concatenateVectors(b, pieces);
}

/// x86 before SSE4.1 has no vector rounding instruction.
bool target_rounds_natively(llvm::IRBuilderBase &b) {
  return x86_target_has(b, "sse4.1");
}

} // namespace

FloatLanes FloatLanes::of(llvm::IRBuilderBase &b, llvm::Value *x) {
  llvm::Type *type = x->getType();
  unsigned width = type->getScalarSizeInBits();
  return FloatLanes{b, type, same_shape(b.getIntNTy(width), type),
                    target_rounds_natively(b)};
}

FloatLanes FloatLanes::with_element(llvm::Type *element) const {
  llvm::Type *t = same_shape(element, type);
  return FloatLanes{b, t,
                    same_shape(b.getIntNTy(element->getScalarSizeInBits()), t),
                    native_rounding};
}

llvm::Value *FloatLanes::c(double v) const {
  return llvm::ConstantFP::get(type, v);
}
llvm::Value *FloatLanes::i(int64_t v) const {
  return llvm::ConstantInt::get(bits, static_cast<uint64_t>(v), true);
}
llvm::Value *FloatLanes::inf() const {
  return llvm::ConstantFP::getInfinity(type);
}
llvm::Value *FloatLanes::nan() const { return llvm::ConstantFP::getNaN(type); }

llvm::Value *FloatLanes::mad(llvm::Value *x, llvm::Value *y, llvm::Value *z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {x, y, z});
}

llvm::Value *FloatLanes::polynomial(llvm::Value *t,
                                    std::initializer_list<double> cs) {
  std::vector<double> coefficients(cs);
  llvm::Value *r = c(coefficients.back());
  for (size_t k = coefficients.size() - 1; k-- > 0;)
    r = mad(r, t, c(coefficients[k]));
  return r;
}

llvm::Value *FloatLanes::abs(llvm::Value *x) {
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
}
llvm::Value *FloatLanes::min(llvm::Value *x, llvm::Value *y) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y);
}
llvm::Value *FloatLanes::max(llvm::Value *x, llvm::Value *y) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y);
}
llvm::Value *FloatLanes::round_even(llvm::Value *x) {
  if (native_rounding)
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
  // |x| + 2^p lies in [2^p, 2^(p+1)), where the spacing is 1: the addition
  // rounds |x| to an integer, ties to even, and the subtraction is exact.
  llvm::Value *big = c(is_f64() ? 0x1p52 : 0x1p23);
  return copysign(sub(add(abs(x), big), big), x);
}

llvm::Value *FloatLanes::floor(llvm::Value *x) {
  if (native_rounding)
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
  // Beyond 2^p every value is an integer (and NaN, infinities stay).
  llvm::Value *r = round_even(x);
  r = select(b.CreateFCmpOGT(r, x), sub(r, c(1.0)), r);
  r = copysign(r, x); // floor keeps x's sign, of -0 too
  return select(less(abs(x), is_f64() ? 0x1p52 : 0x1p23), r, x);
}

llvm::Value *FloatLanes::ceil(llvm::Value *x) {
  if (native_rounding)
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
  llvm::Value *r = round_even(x);
  r = select(b.CreateFCmpOLT(r, x), add(r, c(1.0)), r);
  r = copysign(r, x); // ceil(-0.5) is -0
  return select(less(abs(x), is_f64() ? 0x1p52 : 0x1p23), r, x);
}

llvm::Value *FloatLanes::to_i32(llvm::Value *x) {
  return b.CreateFPToSI(x, same_shape(b.getInt32Ty(), type));
}
llvm::Value *FloatLanes::from_i32(llvm::Value *i) {
  return b.CreateSIToFP(
      b.CreateSExtOrTrunc(i, same_shape(b.getInt32Ty(), type)), type);
}
llvm::Value *FloatLanes::copysign(llvm::Value *magnitude, llvm::Value *sign) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
}

llvm::Value *FloatLanes::flip_sign(llvm::Value *x, llvm::Value *flip) {
  unsigned width = type->getScalarSizeInBits();
  llvm::Value *sign = b.CreateShl(b.CreateZExt(flip, bits), width - 1);
  return from_bits(b.CreateXor(to_bits(x), sign));
}

llvm::Value *FloatLanes::power_of_two(llvm::Value *e) {
  int bias = is_f64() ? 1023 : 127;
  llvm::Value *biased =
      b.CreateAdd(e, llvm::ConstantInt::get(e->getType(), bias));
  return from_bits(b.CreateShl(b.CreateSExt(biased, bits), mantissa_bits()));
}

llvm::Value *FloatLanes::scale(llvm::Value *p, llvm::Value *n) {
  if (llvm::Value *r = x86_scalef(b, p, n))
    return r;
  llvm::Value *e = to_i32(n);
  llvm::Value *half = b.CreateAShr(e, 1);
  llvm::Value *rest = b.CreateSub(e, half);
  return mul(mul(p, power_of_two(half)), power_of_two(rest));
}

FloatLanes::Integral FloatLanes::round_by_shifting(llvm::Value *x,
                                                   double factor) {
  llvm::Value *shifter = c(is_f64() ? 0x1.8p52 : 0x1.8p23);
  llvm::Value *shifted =
      factor == 1.0 ? add(x, shifter) : mad(x, c(factor), shifter);
  return {sub(shifted, shifter), shifted};
}

llvm::Value *FloatLanes::scale(llvm::Value *p, const Integral &n) {
  if (llvm::Value *r = x86_scalef(b, p, n.value))
    return r;
  // shifted's bits are S + n, S the bits of 1.5 * 2^p: even, and its low
  // bits that a shift left by mantissa_bits keeps (9 of f32, 12 of f64)
  // are 0, as are those of S / 2. So bits >> 1 is S / 2 + floor(n / 2)
  // and bits - (bits >> 1) is S / 2 + n - floor(n / 2), which
  // power_of_two turns into powers of two, S / 2 shifted out.
  llvm::Value *bits = to_bits(n.shifted);
  llvm::Value *half = b.CreateAShr(bits, 1);
  llvm::Value *rest = b.CreateSub(bits, half);
  return mul(mul(p, power_of_two(half)), power_of_two(rest));
}

llvm::Value *FloatLanes::clamp_keeping_nan(llvm::Value *x, double lo,
                                           double hi) {
  // x < lo ? lo : x is x86's max(lo, x), which returns its second operand
  // when either is NaN; likewise for min.
  x = select(less(x, lo), c(lo), x);
  return select(b.CreateFCmpOGT(x, c(hi)), c(hi), x);
}

bool target_has_fma(llvm::IRBuilderBase &b) { return x86_target_has(b, "fma"); }

llvm::Value *call_libm_per_lane(llvm::IRBuilderBase &b, const char *name,
                                llvm::Value *x) {
  llvm::Type *element = x->getType()->getScalarType();
  std::string symbol = name;
  if (element->isFloatTy())
    symbol += "f";
  llvm::Module *module = b.GetInsertBlock()->getModule();
  llvm::FunctionCallee callee = module->getOrInsertFunction(
      symbol, llvm::FunctionType::get(element, {element}, false));
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setOnlyAccessesInaccessibleMemory(); // errno at most
  }
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vector)
    return b.CreateCall(callee, {x});
  llvm::Value *result = llvm::PoisonValue::get(vector);
  for (unsigned lane = 0; lane < vector->getNumElements(); ++lane) {
    llvm::Value *r = b.CreateCall(callee, {b.CreateExtractElement(x, lane)});
    result = b.CreateInsertElement(result, r, lane);
  }
  return result;
}

llvm::Value *with_libm_for_lanes(llvm::IRBuilderBase &b, llvm::Value *slow,
                                 llvm::Value *fast, const char *name,
                                 llvm::Value *x) {
  return unless_any_lane(
      b, slow, fast,
      [&] {
        return b.CreateSelect(slow, call_libm_per_lane(b, name, x), fast);
      },
      "math.libm");
}

llvm::Value *unless_any_lane(llvm::IRBuilderBase &b, llvm::Value *slow,
                             llvm::Value *fast,
                             const std::function<llvm::Value *()> &slow_value,
                             const char *block) {
  llvm::Value *any =
      slow->getType()->isVectorTy() ? b.CreateOrReduce(slow) : slow;
  llvm::BasicBlock *before = b.GetInsertBlock();
  llvm::Function *function = before->getParent();
  llvm::LLVMContext &context = b.getContext();
  // Whatever the builder would have inserted before continues after the
  // join (the CPU backend appends at the end of blocks, where this splits
  // nothing).
  llvm::BasicBlock *join =
      b.GetInsertPoint() == before->end()
          ? llvm::BasicBlock::Create(context, "math.join", function)
          : before->splitBasicBlock(b.GetInsertPoint(), "math.join");
  if (llvm::Instruction *branch = before->getTerminator())
    branch->eraseFromParent(); // the split's unconditional branch
  llvm::BasicBlock *slow_block =
      llvm::BasicBlock::Create(context, block, function, join);
  b.SetInsertPoint(before);
  b.CreateCondBr(any, slow_block, join,
                 llvm::MDBuilder(context).createUnlikelyBranchWeights());
  b.SetInsertPoint(slow_block);
  llvm::Value *patched = slow_value();
  llvm::BasicBlock *slow_end = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join, join->begin());
  llvm::PHINode *result = b.CreatePHI(fast->getType(), 2);
  result->addIncoming(fast, before);
  result->addIncoming(patched, slow_end);
  return result;
}

} // namespace blocc::llvm_backend::math
