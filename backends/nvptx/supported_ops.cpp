// What this version of the GPU backend lowers, checked before any code is
// generated, so that a kernel it cannot compile fails with a message naming
// the op and its line instead of compiling to something wrong.
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/kernel_lowering.h"

#include "ir/error.h"

#include <algorithm>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

namespace {

/// Why `op` cannot be lowered, or "" when it can. Over 100 lines for a
/// reason: one case per op code, the GPU backend's list of what it takes.
std::string unsupported_reason(const ir::Operation &op,
                               const ir::AxisInfoAnalysis &axis_info) {
  switch (op.code()) {
  case OpCode::Constant:
  case OpCode::ProgramId:
  case OpCode::NumPrograms:
  case OpCode::Arange:
  case OpCode::Splat:
  case OpCode::Broadcast:
  case OpCode::ExpandDims:
  case OpCode::Cast:
  case OpCode::Bitcast:
  case OpCode::PtrToInt:
  case OpCode::IntToPtr:
  case OpCode::Add:
  case OpCode::Sub:
  case OpCode::Mul:
  case OpCode::And:
  case OpCode::Or:
  case OpCode::Xor:
  case OpCode::Shl:
  case OpCode::Shr:
  case OpCode::Minimum:
  case OpCode::Maximum:
  case OpCode::Umulhi:
  case OpCode::Cmp:
  case OpCode::AddPtr:
  case OpCode::Neg:
  case OpCode::Not:
  case OpCode::Abs:
  case OpCode::Sqrt:
  case OpCode::Rsqrt:
  case OpCode::Exp:
  case OpCode::Exp2:
  case OpCode::Log:
  case OpCode::Log2:
  case OpCode::Sin:
  case OpCode::Cos:
  case OpCode::Tanh:
  case OpCode::Erf:
  case OpCode::Floor:
  case OpCode::Ceil:
  case OpCode::Fma:
  case OpCode::Select:
  case OpCode::MultipleOf:
  case OpCode::MaxContiguous:
  case OpCode::MaxConstancy:
  case OpCode::ConvertLayout:
  case OpCode::Return:
  case OpCode::Yield:
  case OpCode::For:
  case OpCode::If:
  case OpCode::Reduce:
  case OpCode::Scan:
  case OpCode::Reshape:
  case OpCode::Permute:
  case OpCode::Join:
  case OpCode::Split:
  case OpCode::Cat:
    return "";
  case OpCode::Div:
  case OpCode::Rem:
  case OpCode::Print:
  case OpCode::Assert:
    return "";
  case OpCode::AtomicRmw:
  case OpCode::AtomicCas: {
    Scalar pointee = op.operand(0)->type().pointee();
    int bits = pointee == Scalar::Ptr ? 64 : ir::scalar_bits(pointee);
    if (pointee == Scalar::I1 || pointee == Scalar::Ptr ||
        ir::is_fp8(pointee) || bits < 16)
      return "atomics on " + std::string(ir::scalar_name(pointee)) +
             " elements are not supported (16-, 32- and 64-bit integers "
             "and floats are)";
    return "";
  }
  case OpCode::Dot: {
    Scalar acc = op.operand(2)->type().element();
    if (ir::is_fp8(acc) || acc == Scalar::I1)
      return "a dot accumulating in " + std::string(ir::scalar_name(acc)) +
             " is not lowered (fp8 and i1 have no arithmetic; accumulate in "
             "f16, f32 or an integer type)";
    return "";
  }
  case OpCode::DescriptorLoad:
  case OpCode::DescriptorStore:
    if (copied_by_tma(op))
      return "";
    return "a descriptor access not copied by the Tensor Memory Accelerator "
           "(tma) reaches the GPU lowering only rewritten into pointer "
           "arithmetic (the gpu-tensor-descriptors pass does it)";
  case OpCode::Load:
  case OpCode::Store:
    if (op.operand(0)->type().pointee() == Scalar::Ptr)
      return "loading and storing pointers is not lowered by the GPU "
             "backend yet";
    return "";
  default:
    return "'" + std::string(op.name()) +
           "' is not lowered by the GPU backend yet";
  }
}

} // namespace

namespace {

/// Inside a combine region every thread combines its own elements: what
/// stops a program or touches memory has no place there.
std::string unsupported_in_combine(const ir::Operation &op,
                                   const ir::AxisInfoAnalysis &axis_info) {
  switch (op.code()) {
  case OpCode::Div:
  case OpCode::Rem: {
    if (!op.result()->type().is_integer())
      return "";
    std::optional<int64_t> divisor =
        axis_info.get(op.operand(1)).constant_value;
    if (divisor && *divisor != 0)
      return "";
    return "integer division by a value not known when compiling is not "
           "lowered inside a combine region (it could not report a "
           "division by zero); divide outside the combine";
  }
  default:
    if (ir::is_impure_in_combine(op.code()))
      return "'" + std::string(op.name()) +
             "' is not lowered inside a combine region";
    return "";
  }
}

void check_block(const ir::Block &block, const ir::AxisInfoAnalysis &axis_info,
                 bool in_combine = false) {
  for (const auto &op : block.ops()) {
    std::string reason = unsupported_reason(*op, axis_info);
    if (reason.empty() && in_combine)
      reason = unsupported_in_combine(*op, axis_info);
    if (!reason.empty())
      throw Error(op->describe() + ": " + reason +
                  "; run this kernel on host memory (CPU backend or "
                  "interpreter) until it is");
    bool combine = in_combine || op->code() == OpCode::Reduce ||
                   op->code() == OpCode::Scan;
    for (size_t i = 0; i < op->num_regions(); ++i)
      check_block(*op->region(i), axis_info, combine);
  }
}

} // namespace

void check_supported(const ir::Function &function,
                     const ir::AxisInfoAnalysis &axis_info) {
  check_block(function.body(), axis_info);
}

} // namespace blocc::nvptx
