// device_print, device_assert, and the division-by-zero check of integer
// division and remainder by values not known when compiling.
//
// print: every element is printed once, by the thread that owns it in the
// operand's full layout (scalars by thread 0), with one vprintf call per
// line in the interpreter's format: "pid (x, y, z) idx (i, j) <prefix>
// <value>" ("idx ()" for scalars, "<prefix> (operand k)" with several
// operands, "pid (x, y, z) <prefix>" with none). Differences, which the
// GPU imposes: lines of different threads and programs appear in no fixed
// order (the interpreter prints each program's elements in index order);
// floats print with printf's %.9g (f64: %.17g) — the same value read back,
// but not always the interpreter's shortest text (0.1f prints as
// 0.100000001); output appears when the host synchronizes with the GPU,
// and the driver's printf buffer (1 MB by default) drops what does not fit.
//
// assert and the division check stop the program through fail_if
// (lower_fault.cpp), naming the first false lane or zero divisor.
#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/element_ops.h"
#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

namespace {

constexpr unsigned kGlobal = 1;

std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '%')
      out += '%';
  }
  return out;
}

/// A printf conversion for one element and the value it takes (ints of 32
/// or 64 bits, doubles: what vprintf's argument buffer holds).
std::pair<std::string, llvm::Value *>
printf_value(llvm::IRBuilderBase &b, llvm::Value *v, Scalar s, bool hex) {
  if (hex || s == Scalar::Ptr) {
    int bits = s == Scalar::Ptr ? 64 : ir::scalar_bits(s);
    int digits = bits < 4 ? 1 : bits / 4;
    if (v->getType()->isPointerTy())
      v = b.CreatePtrToInt(v, b.getInt64Ty());
    else if (v->getType()->isFloatingPointTy())
      v = b.CreateBitCast(
          v,
          b.getIntNTy(v->getType()->getPrimitiveSizeInBits().getFixedValue()));
    if (bits > 32)
      return {"0x%0" + std::to_string(digits) + "llx", v};
    return {"0x%0" + std::to_string(digits) + "x",
            b.CreateZExt(v, b.getInt32Ty())};
  }
  if (ir::is_integer(s)) {
    bool is_signed = ir::is_signed(s);
    if (ir::scalar_bits(s) > 32)
      return {is_signed ? "%lld" : "%llu", v};
    return {is_signed ? "%d" : "%u", is_signed
                                         ? b.CreateSExt(v, b.getInt32Ty())
                                         : b.CreateZExt(v, b.getInt32Ty())};
  }
  if (s == Scalar::F64)
    return {"%.17g", v};
  llvm::Value *single = llvm_backend::to_compute(b, s, v);
  return {"%.9g", b.CreateFPExt(single, b.getDoubleTy())};
}

/// Calls vprintf(format, arguments): the arguments go into a local buffer,
/// each at its natural alignment.
void emit_vprintf(llvm::IRBuilderBase &b, const std::string &format,
                  const std::vector<llvm::Value *> &arguments) {
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::Module &module = *f->getParent();
  llvm::LLVMContext &context = b.getContext();
  // One constant per distinct format, one argument buffer per layout.
  llvm::Constant *text = llvm::ConstantDataArray::getString(context, format);
  llvm::GlobalVariable *global = nullptr;
  for (llvm::GlobalVariable &g : module.globals())
    if (g.getName().starts_with("blocc_format") && g.hasInitializer() &&
        g.getInitializer() == text)
      global = &g;
  if (!global) {
    global = new llvm::GlobalVariable(
        module, text->getType(), true, llvm::GlobalValue::PrivateLinkage, text,
        "blocc_format", nullptr, llvm::GlobalValue::NotThreadLocal, kGlobal);
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  llvm::Value *generic_format =
      b.CreateAddrSpaceCast(global, llvm::PointerType::get(context, 0));
  llvm::Value *buffer =
      llvm::ConstantPointerNull::get(llvm::PointerType::get(context, 0));
  if (!arguments.empty()) {
    std::vector<llvm::Type *> types;
    for (llvm::Value *a : arguments)
      types.push_back(a->getType());
    auto *layout = llvm::StructType::get(context, types);
    llvm::BasicBlock &entry = f->getEntryBlock();
    llvm::AllocaInst *slot = nullptr;
    for (llvm::Instruction &i : entry)
      if (auto *a = llvm::dyn_cast<llvm::AllocaInst>(&i);
          a && a->getAllocatedType() == layout &&
          a->getName().starts_with("blocc_printf_arguments"))
        slot = a;
    if (!slot) {
      llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
      slot = at_entry.CreateAlloca(layout, nullptr, "blocc_printf_arguments");
    }
    for (size_t i = 0; i < arguments.size(); ++i)
      b.CreateStore(arguments[i],
                    b.CreateStructGEP(layout, slot, static_cast<unsigned>(i)));
    buffer = slot;
  }
  llvm::FunctionCallee vprintf = module.getOrInsertFunction(
      "vprintf", llvm::FunctionType::get(b.getInt32Ty(),
                                         {llvm::PointerType::get(context, 0),
                                          llvm::PointerType::get(context, 0)},
                                         false));
  b.CreateCall(vprintf, {generic_format, buffer});
}

/// Runs `body` in the threads where `condition` (i1) holds.
void only_where(llvm::IRBuilderBase &b, llvm::Value *condition,
                const std::function<void()> &body) {
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(condition); c && c->isOne())
    return body();
  llvm::Function *f = b.GetInsertBlock()->getParent();
  auto *then = llvm::BasicBlock::Create(b.getContext(), "debug.here", f);
  auto *join = llvm::BasicBlock::Create(b.getContext(), "debug.join", f);
  b.CreateCondBr(condition, then, join);
  b.SetInsertPoint(then);
  body();
  b.CreateBr(join);
  b.SetInsertPoint(join);
}

llvm::Value *thread_is_first(llvm::IRBuilderBase &b) {
  return b.CreateICmpEQ(
      b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}),
      b.getInt32(0));
}

} // namespace

void KernelLowering::lower_print(const ir::Operation &op) {
  const std::string prefix = escaped(op.string_attr_or("prefix", ""));
  const bool hex = op.has_attr("hex") && op.int_attr("hex") != 0;
  std::vector<llvm::Value *> pid;
  for (llvm::Intrinsic::ID id : {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z})
    pid.push_back(builder.CreateIntrinsic(id, {}, {}));
  const std::string pid_format = "pid (%u, %u, %u) ";
  if (op.num_operands() == 0) {
    only_where(builder, thread_is_first(builder),
               [&] { emit_vprintf(builder, pid_format + prefix + "\n", pid); });
    return;
  }
  for (size_t k = 0; k < op.num_operands(); ++k) {
    const ir::Value *v = op.operand(k);
    Scalar element = v->type().element();
    std::string label = prefix;
    if (op.num_operands() > 1)
      label += " (operand " + std::to_string(k) + ")";
    auto line = [&](const std::vector<llvm::Value *> &index,
                    llvm::Value *value) {
      auto [conversion, argument] = printf_value(builder, value, element, hex);
      std::string format = pid_format + "idx (";
      for (size_t d = 0; d < index.size(); ++d)
        format += d ? ", %u" : "%u";
      format += ") " + label + " " + conversion + "\n";
      std::vector<llvm::Value *> arguments = pid;
      arguments.insert(arguments.end(), index.begin(), index.end());
      arguments.push_back(argument);
      emit_vprintf(builder, format, arguments);
    };
    if (!v->type().is_block()) {
      only_where(builder, thread_is_first(builder),
                 [&] { line({}, scalar(v)); });
      continue;
    }
    // The full layout: each element has one owner there.
    const Layout *full = nullptr;
    for (const Layout &l : layouts().layouts_of(v))
      if (l.shape == parent(l).shape && l.dims.size() == l.shape.size()) {
        bool identity = true;
        for (size_t d = 0; d < l.dims.size(); ++d)
          identity = identity && l.dims[d] == static_cast<int>(d);
        if (identity) {
          full = &l;
          break;
        }
      }
    if (!full)
      throw Error("internal: no full layout for the operand of " +
                  op.describe());
    const BlockedLayout &p = parent(*full);
    const Registers &values = registers(v, *full);
    only_where(builder, owns_elements(p), [&] {
      for (int64_t r = 0; r < p.num_registers(); ++r) {
        if (canonical_register(p, *full, r) != r)
          continue;
        std::vector<llvm::Value *> index;
        for (size_t d = 0; d < full->shape.size(); ++d)
          index.push_back(element_index(*full, r, static_cast<int>(d)));
        line(index, values[r]);
      }
    });
  }
}

namespace {

/// Per thread: whether `fails(r)` holds for any of its elements of `v` in
/// `layout`, and the smallest linear index among those (i32).
std::pair<llvm::Value *, llvm::Value *>
first_failing_lane(KernelLowering &k, const Layout &layout,
                   const std::function<llvm::Value *(int64_t)> &fails) {
  llvm::IRBuilderBase &b = k.builder;
  const BlockedLayout &p = k.parent(layout);
  llvm::Value *none = b.getInt32(0xffffffffu);
  llvm::Value *first = none;
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    if (canonical_register(p, layout, r) != r)
      continue;
    llvm::Value *lane =
        b.CreateSelect(fails(r), k.linear_index(layout, r), none);
    first = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, first, lane);
  }
  return {b.CreateICmpNE(first, none), first};
}

} // namespace

void KernelLowering::lower_assert(const ir::Operation &op) {
  const ir::Value *condition = op.operand(0);
  int site = add_fault_site(
      op, "assertion failed: " + op.string_attr_or("message", ""),
      FaultSite::Form::FalseLane);
  if (!condition->type().is_block()) {
    fail_if(builder.CreateNot(scalar(condition)), builder.getInt32(0), site,
            true);
    return;
  }
  const Layout &layout = layouts().layouts_of(condition).front();
  const Registers &values = registers(condition, layout);
  auto [failed, lane] = first_failing_lane(
      *this, layout, [&](int64_t r) { return builder.CreateNot(values[r]); });
  fail_if(failed, lane, site, false);
}

void KernelLowering::check_division(const ir::Operation &op) {
  const ir::Value *result = op.result();
  if (!result->type().is_integer())
    return;
  const ir::Value *divisor = op.operand(1);
  std::optional<int64_t> known = axis_info.get(divisor).constant_value;
  if (known && *known != 0)
    return;
  if (result->type().is_block() && layouts().layouts_of(result).empty())
    return; // not computed: nothing uses it
  int site =
      add_fault_site(op,
                     op.code() == OpCode::Div ? "integer division by zero"
                                              : "integer remainder by zero",
                     FaultSite::Form::LaneFirst);
  if (!result->type().is_block()) {
    fail_if(llvm_backend::emit_divisor_is_zero(builder, scalar(divisor)),
            builder.getInt32(0), site, true);
    return;
  }
  const Layout &layout = layouts().layouts_of(result).front();
  const Registers &values = registers(divisor, layout);
  auto [failed, lane] = first_failing_lane(*this, layout, [&](int64_t r) {
    return llvm_backend::emit_divisor_is_zero(builder, values[r]);
  });
  fail_if(failed, lane, site, false);
}

} // namespace blocc::nvptx
