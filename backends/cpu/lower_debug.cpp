// print and assert. print hands the runtime hook a pointer to each
// operand's elements (blocks from their slots, scalars from a stack copy);
// the hook formats lines exactly as the interpreter does. assert checks
// every lane and reports the first false one.
#include "backends/cpu/kernel_lowering.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/IR/Module.h>

namespace blocc::cpu {

void KernelLowering::lower_print(const ir::Operation &op) {
  PrintSite site;
  site.prefix = op.string_attr_or("prefix", "");
  site.hex = op.has_attr("hex") && op.int_attr("hex") != 0;
  size_t n = op.num_operands();
  llvm::Type *pointers =
      llvm::ArrayType::get(builder.getPtrTy(), std::max<size_t>(n, 1));
  llvm::AllocaInst *table = entry_variable(pointers);
  for (size_t k = 0; k < n; ++k) {
    const ir::Value *v = op.operand(k);
    ir::Scalar element = v->type().element();
    site.elements.push_back(element);
    site.shapes.push_back(v->type().shape());
    llvm::Value *data;
    if (v->type().is_block()) {
      data = materialized_slot(v);
    } else {
      llvm::Value *x = scalar(v);
      if (element == ir::Scalar::I1)
        x = builder.CreateZExt(x, storage_type(element));
      data = entry_variable(storage_type(element));
      builder.CreateStore(x, data);
    }
    builder.CreateStore(data,
                        builder.CreateConstGEP2_32(pointers, table, 0,
                                                   static_cast<unsigned>(k)));
  }
  info.prints.push_back(std::move(site));
  llvm::FunctionCallee hook = module.getOrInsertFunction(
      "blocc_cpu_print",
      llvm::FunctionType::get(
          builder.getVoidTy(),
          {builder.getPtrTy(), builder.getInt32Ty(), builder.getPtrTy()},
          false));
  builder.CreateCall(
      hook,
      {program, builder.getInt32(static_cast<int32_t>(info.prints.size() - 1)),
       table});
}

void KernelLowering::lower_assert(const ir::Operation &op) {
  const ir::Value *condition = op.operand(0);
  int site = add_fault_site(
      op, "assertion failed: " + op.string_attr_or("message", ""),
      condition->type().shape(), FaultSite::Form::FalseLane);
  if (!condition->type().is_block()) {
    fail_if(builder.CreateNot(scalar(condition)), site, [&] { return i64(0); });
    return;
  }
  int vl = vector_width(condition->type());
  chunk_loop(condition->type().num_elements(), vl, [&](llvm::Value *base) {
    Chunk chunk{vl, {}};
    llvm::Value *is_false =
        builder.CreateNot(evaluate(chunk, condition, Lanes::contiguous(base)));
    fail_if(builder.CreateOrReduce(is_false), site, [&] {
      return builder.CreateAdd(builder.CreateZExt(base, builder.getInt64Ty()),
                               first_set_lane(is_false, vl));
    });
  });
}

} // namespace blocc::cpu
