// f32 division of a block by a divisor that is one value in each thread
// (softmax's numerators / sum, x / n), correctly rounded as div.rn.f32 but
// with one reciprocal per thread instead of one per element.
//
// div.rn.f32 becomes a reciprocal on the multi-function unit, five fmas,
// a range check and a branch around a slow path for every element; in
// softmax that was a tenth of the issued instructions and a quarter-rate
// operation per element. The quotients and the bounds within which they
// are exact are backends/llvm/one_divisor.h's (one reciprocal RN(1/b),
// then a multiplication and two fmas per numerator, Markstein's
// correction), shared with the CPU backend; here the bounds are checked
// for each group of eight numerators at once. Zeros, infinities, tiny or
// huge values send their group down the slow path (F64Divider below). A
// NaN numerator gives the hardware's NaN either way. The fast path was
// checked on the host (the same formulas in C) against float division
// over 290 million pairs, among them every significand of a in [1, 2)
// against ten divisors and every significand of b in [1, 2) against 24
// random a; tests/cpu/division_test.cpp checks the CPU backend's use.
#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/one_divisor.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

namespace {

llvm::Value *fma(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y,
                 llvm::Value *z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

/// RN(a / b) for f32 a and b without div.rn.f32, whose slow path is a
/// subroutine call: live registers across such calls cost ptxas 10 to 17
/// more registers per thread in softmax (1 block per SM instead of 2 on 16
/// warps). In f64 every f32 quotient is normal, so two Newton steps from
/// rcp.approx and one correction give a/b within an f64 ulp; an f32
/// quotient is never closer than about 2^-49 (relative) to a midpoint
/// between two f32 neighbours, so rounding that to f32 is RN(a / b),
/// subnormal results included. Zeros, infinities and NaNs are a * (1/b)'s
/// IEEE special cases, computed as such. One reciprocal serves the group.
/// Checked on the host (the same formulas in C, rcp.approx replaced by
/// 1/d off by up to 2^-20) against float division over 175 million pairs:
/// random bits, subnormal numerators, divisors and quotients, specials.
class F64Divider {
public:
  F64Divider(llvm::IRBuilderBase &b, llvm::Value *divisor)
      : b_(b), f64_(b.getDoubleTy()), d_(b.CreateFPExt(divisor, f64_)) {
    y0_ = b.CreateIntrinsic(llvm::Intrinsic::nvvm_rcp_approx_ftz_d, {}, {d_});
    y_ = y0_;
    for (int step = 0; step < 2; ++step)
      y_ = fma(b, y_,
               fma(b, b.CreateFNeg(d_), y_, llvm::ConstantFP::get(f64_, 1.0)),
               y_);
    divisor_regular_ = regular(d_);
  }

  llvm::Value *divide(llvm::Value *numerator) {
    llvm::Value *a = b_.CreateFPExt(numerator, f64_);
    llvm::Value *q = b_.CreateFMul(a, y_);
    q = fma(b_, fma(b_, b_.CreateFNeg(d_), q, a), y_, q);
    llvm::Value *special =
        b_.CreateNot(b_.CreateAnd(regular(a), divisor_regular_));
    return b_.CreateFPTrunc(b_.CreateSelect(special, b_.CreateFMul(a, y0_), q),
                            b_.getFloatTy());
  }

private:
  llvm::Value *regular(llvm::Value *v) { // finite and not zero
    llvm::Value *size = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
    return b_.CreateAnd(
        b_.CreateFCmpOLT(size, llvm::ConstantFP::getInfinity(f64_)),
        b_.CreateFCmpOGT(size, llvm::ConstantFP::get(f64_, 0.0)));
  }

  llvm::IRBuilderBase &b_;
  llvm::Type *f64_;
  llvm::Value *d_, *y0_, *y_, *divisor_regular_;
};

} // namespace

std::optional<KernelLowering::Registers>
KernelLowering::divide_by_one_divisor(const ir::Operation &op,
                                      const Layout &layout) {
  if (op.result()->type().element() != Scalar::F32)
    return std::nullopt;
  const Registers &numerators = registers(op.operand(0), layout);
  const Registers &divisors = registers(op.operand(1), layout);
  const BlockedLayout &p = parent(layout);
  std::vector<int64_t> canonical;
  for (int64_t r = 0; r < p.num_registers(); ++r)
    if (canonical_register(p, layout, r) == r)
      canonical.push_back(r);
  if (canonical.size() < 2)
    return std::nullopt;
  llvm::Value *b = divisors[canonical[0]];
  for (int64_t r : canonical)
    if (divisors[r] != b)
      return std::nullopt;

  llvm::IRBuilderBase &ir = builder;
  llvm_backend::OneDivisor one(ir, b);

  // Groups of eight numerators, each checked and branched on as one: one
  // check per thread kept every quotient of the thread live at once (ptxas
  // computed them all before the first store) and spilled on 4 warps;
  // groups of four took more registers than eight in softmax at N = 4096
  // and 8192 (8192 on 16 warps: 52 against 44).
  Registers out(p.num_registers(), nullptr);
  const size_t kGroup = 8;
  llvm::Function *f = ir.GetInsertBlock()->getParent();
  for (size_t first = 0; first < canonical.size(); first += kGroup) {
    size_t end = std::min(canonical.size(), first + kGroup);
    llvm::Value *smallest = nullptr, *largest = nullptr;
    for (size_t i = first; i < end; ++i) {
      llvm::Value *a = ir.CreateUnaryIntrinsic(llvm::Intrinsic::fabs,
                                               numerators[canonical[i]]);
      smallest = smallest ? ir.CreateMinNum(smallest, a) : a;
      largest = largest ? ir.CreateMaxNum(largest, a) : a;
    }
    llvm::Value *fast = ir.CreateAnd(
        one.fits, ir.CreateAnd(ir.CreateFCmpOGE(smallest, one.low),
                               ir.CreateFCmpOLE(largest, one.high)));
    auto *fast_block = llvm::BasicBlock::Create(context, "div.fast", f);
    auto *slow_block = llvm::BasicBlock::Create(context, "div.slow", f);
    auto *join = llvm::BasicBlock::Create(context, "div.join", f);
    ir.CreateCondBr(fast, fast_block, slow_block);

    ir.SetInsertPoint(fast_block);
    std::vector<llvm::Value *> quick;
    for (size_t i = first; i < end; ++i)
      quick.push_back(one.quotient(ir, numerators[canonical[i]]));
    ir.CreateBr(join);

    ir.SetInsertPoint(slow_block);
    std::vector<llvm::Value *> exact;
    F64Divider slow(ir, b);
    for (size_t i = first; i < end; ++i)
      exact.push_back(slow.divide(numerators[canonical[i]]));
    ir.CreateBr(join);

    ir.SetInsertPoint(join);
    for (size_t i = first; i < end; ++i) {
      llvm::PHINode *phi = ir.CreatePHI(ir.getFloatTy(), 2);
      phi->addIncoming(quick[i - first], fast_block);
      phi->addIncoming(exact[i - first], slow_block);
      out[canonical[i]] = phi;
    }
  }
  for (int64_t r = 0; r < p.num_registers(); ++r)
    if (!out[r])
      out[r] = out[canonical_register(p, layout, r)];
  return out;
}

} // namespace blocc::nvptx
