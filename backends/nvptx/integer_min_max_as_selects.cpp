#include "backends/nvptx/integer_min_max_as_selects.h"

#include "backends/nvptx/llvm_rewrite.h"
#include "backends/nvptx/ptx_min_max_as_selects.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PatternMatch.h>

#include <optional>
#include <string>

namespace blocc::nvptx {

namespace {

/// An integer min/max: which one and its operands.
struct MinMax {
  bool is_max = false;
  bool is_signed = false;
  llvm::Value *a = nullptr, *b = nullptr;
};

std::optional<MinMax> as_min_max(llvm::Instruction &i) {
  llvm::Type *t = i.getType()->getScalarType();
  if (!t->isIntegerTy() || t->getIntegerBitWidth() < 8 ||
      t->getIntegerBitWidth() > 64)
    return std::nullopt;
  if (auto *call = llvm::dyn_cast<llvm::MinMaxIntrinsic>(&i))
    return MinMax{call->getIntrinsicID() == llvm::Intrinsic::smax ||
                      call->getIntrinsicID() == llvm::Intrinsic::umax,
                  call->isSigned(), call->getLHS(), call->getRHS()};
  using namespace llvm::PatternMatch;
  llvm::Value *a = nullptr, *b = nullptr;
  if (match(&i, m_SMax(m_Value(a), m_Value(b))))
    return MinMax{true, true, a, b};
  if (match(&i, m_SMin(m_Value(a), m_Value(b))))
    return MinMax{false, true, a, b};
  if (match(&i, m_UMax(m_Value(a), m_Value(b))))
    return MinMax{true, false, a, b};
  if (match(&i, m_UMin(m_Value(a), m_Value(b))))
    return MinMax{false, false, a, b};
  return std::nullopt;
}

/// An inline-asm compare and select for a min/max of `bits`-bit integers
/// (16, 32 or 64), the same text as the PTX rewrite's.
llvm::InlineAsm *select_asm(llvm::LLVMContext &context, const MinMax &m,
                            unsigned bits) {
  std::string text =
      min_max_as_select(m.is_max, m.is_signed, bits, "$0", "$1", "$2");
  std::string c = bits == 16 ? "h" : bits == 32 ? "r" : "l";
  llvm::Type *t = llvm::IntegerType::get(context, bits);
  auto *type = llvm::FunctionType::get(t, {t, t}, false);
  return llvm::InlineAsm::get(type, text, "=" + c + "," + c + "," + c,
                              /*hasSideEffects=*/false);
}

/// m's min/max of the scalars x and y, at b's insertion point.
llvm::Value *select_of(llvm::IRBuilder<> &b, const MinMax &m, llvm::Value *x,
                       llvm::Value *y) {
  unsigned bits = x->getType()->getIntegerBitWidth();
  // PTX registers hold 16 bits at least; bytes compare extended.
  unsigned asm_bits = bits <= 16 ? 16 : bits <= 32 ? 32 : 64;
  llvm::Type *t = b.getIntNTy(asm_bits);
  auto widen = [&](llvm::Value *v) {
    return m.is_signed ? b.CreateSExtOrTrunc(v, t) : b.CreateZExtOrTrunc(v, t);
  };
  llvm::Value *selected = call_pure_asm(
      b, select_asm(b.getContext(), m, asm_bits), {widen(x), widen(y)});
  return b.CreateTrunc(selected, x->getType());
}

} // namespace

void emit_integer_min_max_as_selects(llvm::Module &module) {
  replace_instructions(
      module, [](llvm::Instruction &i) { return as_min_max(i).has_value(); },
      [](llvm::IRBuilder<> &b, llvm::Instruction &i) {
        MinMax m = *as_min_max(i);
        return elementwise(b, i.getType(), {m.a, m.b},
                           [&](const std::vector<llvm::Value *> &xy) {
                             return select_of(b, m, xy[0], xy[1]);
                           });
      });
}

} // namespace blocc::nvptx
