#include "backends/nvptx/tma.h"

#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/pipeline_loads.h"
#include "ir/error.h"
#include "ir/tensor_descriptor.h"

namespace blocc::nvptx {

namespace {

using ir::OpCode;
using ir::Scalar;

/// The element type a tensor map copies for `s` (bytes, for the 8-bit
/// formats the MMA reads as they are); nullopt for the others.
std::optional<cuda::TensorMapElement> map_element(Scalar s) {
  switch (s) {
  case Scalar::F16:
    return cuda::TensorMapElement::F16;
  case Scalar::BF16:
    return cuda::TensorMapElement::BF16;
  case Scalar::F32:
    return cuda::TensorMapElement::F32;
  case Scalar::I8:
  case Scalar::U8:
  case Scalar::F8E4M3:
  case Scalar::F8E5M2:
    return cuda::TensorMapElement::U8;
  default:
    return std::nullopt;
  }
}

/// `v` as the host knows it at launch: a constant, or an integer argument
/// of the kernel (as it is, or widened to int64, as descriptors take their
/// extents and strides).
std::optional<cuda::TensorMapValue> host_value(const ir::Function &function,
                                               const ir::Value *v) {
  const ir::Operation *op = v->defining_op();
  if (op && op->code() == OpCode::Constant && op->has_attr("value"))
    if (const auto *c = std::get_if<int64_t>(&op->attributes().at("value")))
      return cuda::TensorMapValue::of_constant(*c);
  if (op && op->code() == OpCode::Cast && op->operand(0)->type().is_integer())
    v = op->operand(0);
  if (v->is_block_argument() && v->owner_block() == &function.body() &&
      v->type().is_integer())
    return cuda::TensorMapValue::of_argument(v->index());
  return std::nullopt;
}

/// What divides `value` (a constant, or an argument's divisibility).
int64_t known_divisor(const ir::Function &function,
                      const cuda::TensorMapValue &value) {
  if (value.argument < 0)
    return value.constant == 0 ? int64_t{1} << 30 : value.constant;
  return function.argument_info(static_cast<size_t>(value.argument))
      .divisibility;
}

/// The one op of `function` that uses `v`; nullptr where none or several.
const ir::Operation *only_user(const ir::Function &function,
                               const ir::Value *v) {
  const ir::Operation *user = nullptr;
  int count = 0;
  function.walk([&](const ir::Operation &op) {
    for (const ir::Value *operand : op.operands())
      if (operand == v) {
        ++count;
        user = &op;
      }
  });
  return count == 1 ? user : nullptr;
}

cuda::TensorMapSwizzle swizzle_of_row(int64_t row_bytes) {
  return row_bytes == 128  ? cuda::TensorMapSwizzle::B128
         : row_bytes == 64 ? cuda::TensorMapSwizzle::B64
                           : cuda::TensorMapSwizzle::B32;
}

/// Whether `dot` reads operand `operand` from shared memory on warpgroup
/// MMAs: as its engine says in GPU IR, else as gpu-accelerate-dot will
/// decide.
bool warpgroups_read_from_shared(const ir::Operation &dot, int operand,
                                 int num_warps, const GpuArch &arch) {
  if (dot.has_attr(gpu_attr::kEngine))
    return runs_on_warpgroups(dot) &&
           (operand != 0 || !dot.has_attr(gpu_attr::kMmaAInRegisters));
  return wgmma_accumulator_layout(dot, num_warps, arch) &&
         (operand != 0 || !wgmma_operand_a_layout(dot, num_warps, arch));
}

class TmaDecision {
public:
  TmaDecision(const ir::Function &function, const ir::Operation &op,
              std::string *why)
      : function_(function), op_(op), why_(why) {}

  std::optional<TmaCopy> decide(int num_warps, const GpuArch &arch) {
    if (arch.sm != 90 || !arch.arch_specific)
      return no("TMA copies for warpgroup MMAs need sm_90a");
    if (!ir::is_descriptor_access(op_.code()) ||
        ir::DescriptorOperands(op_).tile_type().rank() != 2)
      return no("only 2-D descriptor accesses are copied by TMA");
    if (op_.code() == OpCode::DescriptorStore)
      return store();
    const ir::Type &type = op_.result()->type();
    TmaCopy copy;
    copy.op = &op_;
    // The dot may read the tile transposed, through a permute (attention's
    // K^T from a tile of K's rows): the same bytes (gpu_ir.h: is_tile_view).
    const ir::Value *read = op_.result();
    copy.dot = only_user(function_, read);
    std::vector<const ir::Operation *> views;
    if (copy.dot && is_tile_view(*copy.dot) &&
        copy.dot->code() == OpCode::Permute) {
      views.push_back(copy.dot);
      read = copy.dot->result();
      copy.dot = only_user(function_, read);
    }
    if (!copy.dot || copy.dot->code() != OpCode::Dot ||
        copy.dot->operand(0) == copy.dot->operand(1) ||
        copy.dot->operand(2) == read)
      return no("the tile is not read by one dot alone, as A or B");
    copy.operand = copy.dot->operand(0) == read ? 0 : 1;
    const bool k_fastest = tma_lands_k_fastest(copy.operand, views);
    const int64_t bytes = ir::scalar_bits(type.element()) / 8;
    if (!k_fastest && bytes != 2)
      return no("a tile of " + std::to_string(8 * bytes) +
                "-bit elements lands " + (copy.operand == 0 ? "M" : "N") +
                "-major, which warpgroup MMAs read for 16-bit elements only");
    if (!warpgroups_read_from_shared(*copy.dot, copy.operand, num_warps, arch))
      return no("its dot does not read it from shared memory on warpgroup "
                "MMAs");
    copy.tile = wgmma_operand_tile(*copy.dot, copy.operand, k_fastest);
    if (copy.tile.rows != type.dim(0) || copy.tile.columns != type.dim(1))
      return no("internal: the operand tile is not the tile's shape");
    return boxed(copy, type.element());
  }

private:
  /// A store's value, written to a tile swizzled as an operand's rows
  /// would be, then copied out.
  std::optional<TmaCopy> store() {
    const ir::Type &type = ir::DescriptorOperands(op_).tile_type();
    const int64_t bytes = ir::scalar_bits(type.element()) / 8;
    TmaCopy copy;
    copy.op = &op_;
    copy.tile.rows = type.dim(0);
    copy.tile.columns = type.dim(1);
    copy.tile.element_bytes = bytes;
    if (copy.tile.columns * bytes < 32)
      return no("rows of fewer than 32 bytes fit no TMA swizzling mode");
    copy.tile.swizzle = wgmma_swizzle(copy.tile.columns * bytes, bytes);
    return boxed(copy, type.element());
  }

  /// `copy` with its boxes (one an atom of the tile's rows) and its map.
  std::optional<TmaCopy> boxed(TmaCopy &copy, Scalar element) {
    const int64_t bytes = ir::scalar_bits(element) / 8;
    copy.box_columns = copy.tile.swizzle.atom_columns
                           ? copy.tile.swizzle.atom_columns
                           : copy.tile.columns;
    const int64_t row_bytes = copy.box_columns * bytes;
    if (row_bytes != 32 && row_bytes != 64 && row_bytes != 128)
      return no("rows of " + std::to_string(row_bytes) +
                " bytes fit no TMA swizzling mode (32, 64 or 128 bytes)");
    if (copy.tile.rows > 256)
      return no("more than 256 rows in a box");
    copy.boxes = copy.tile.columns / copy.box_columns;
    if (!encodable(copy, element, bytes))
      return std::nullopt;
    return copy;
  }

  std::nullopt_t no(const std::string &reason) {
    refuse(reason);
    return std::nullopt;
  }

  bool refuse(const std::string &reason) {
    if (why_)
      *why_ = reason;
    return false;
  }

  /// Fills copy.map from the descriptor's operands where the host can
  /// encode them.
  bool encodable(TmaCopy &copy, Scalar element, int64_t bytes) {
    ir::DescriptorOperands d(op_);
    std::optional<cuda::TensorMapElement> map_type = map_element(element);
    if (!map_type)
      return refuse("TMA copies no " + std::string(ir::scalar_name(element)));
    cuda::TensorMapRequest &map = copy.map;
    map.element = *map_type;
    for (int dim = 0; dim < d.rank(); ++dim)
      map.wide_offsets = map.wide_offsets ||
                         d.offset(dim)->type() == ir::Type::scalar(Scalar::I64);
    const ir::Value *base = d.base();
    if (!base->is_block_argument() || base->owner_block() != &function_.body())
      return refuse("the base is not a pointer argument of the kernel");
    map.address_argument = base->index();
    if (function_.argument_info(static_cast<size_t>(base->index()))
                .divisibility %
            16 !=
        0)
      return refuse("the base is not known to be 16-byte aligned");
    // Innermost first, as the driver takes them.
    for (int dim = 1; dim >= 0; --dim) {
      std::optional<cuda::TensorMapValue> extent =
          host_value(function_, d.shape(dim));
      if (!extent)
        return refuse("an extent is neither an argument nor a constant");
      map.global_dims.push_back(*extent);
    }
    std::optional<cuda::TensorMapValue> last =
        host_value(function_, d.stride(1));
    if (!last || last->argument >= 0 || last->constant != 1)
      return refuse("the last stride is not the constant 1");
    std::optional<cuda::TensorMapValue> outer =
        host_value(function_, d.stride(0));
    if (!outer)
      return refuse("the outer stride is neither an argument nor a constant");
    // A constant the map cannot hold (TMA strides are positive) leaves the
    // tile to pointers; an argument is checked at launch.
    if (outer->argument < 0 && outer->constant < 1)
      return refuse("the outer stride is a constant below 1");
    if ((known_divisor(function_, *outer) * bytes) % 16 != 0)
      return refuse(
          "the outer stride is not known to be a multiple of 16 bytes");
    map.global_strides.push_back(*outer);
    map.box_dims = {static_cast<uint32_t>(copy.box_columns),
                    static_cast<uint32_t>(copy.tile.rows)};
    map.swizzle = swizzle_of_row(copy.box_columns * bytes);
    map.stored = op_.code() == OpCode::DescriptorStore;
    return true;
  }

  const ir::Function &function_;
  const ir::Operation &op_;
  std::string *why_;
};

} // namespace

std::optional<TmaCopy> tma_copy(const ir::Function &function,
                                const ir::Operation &op, int num_warps,
                                const GpuArch &arch, std::string *why) {
  return TmaDecision(function, op, why).decide(num_warps, arch);
}

TmaCopy marked_tma_copy(const ir::Function &function, const ir::Operation &op,
                        int num_warps, const GpuArch &arch) {
  std::string why;
  std::optional<TmaCopy> copy = tma_copy(function, op, num_warps, arch, &why);
  if (!copy)
    throw Error("GPU IR: " + op.describe() + ": marked tma, but " + why);
  return *copy;
}

} // namespace blocc::nvptx
