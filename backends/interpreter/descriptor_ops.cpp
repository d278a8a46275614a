// A descriptor access is a masked load or store of a block of pointers: the
// addresses and the in-bounds mask are computed here, element by element
// from the definition in ir/tensor_descriptor.h, and memory_ops.cpp does the
// access with its checks. (The rewrite pass builds the same thing out of IR
// ops; the two are tested against each other.)
#include "backends/interpreter/descriptor_ops.h"

#include "backends/interpreter/element.h"
#include "backends/interpreter/memory_ops.h"
#include "ir/tensor_descriptor.h"

namespace blocc::interp {

namespace {

struct TileAccess {
  RuntimeValue pointers; // one address per element of the tile
  RuntimeValue inside;   // i1: the element lies inside the array
};

/// A scalar operand as a signed 64-bit number (canonical integers are
/// sign-extended by their type, so an i32 offset reads as itself).
int64_t signed_scalar(const RuntimeValue &v) {
  return static_cast<int64_t>(v.at(0));
}

TileAccess tile_access(const ExecutionSite &site,
                       const std::vector<const RuntimeValue *> &operands) {
  ir::DescriptorOperands d(*site.op);
  const ir::Type &tile = d.tile_type();
  int rank = d.rank();
  if (rank != tile.rank() ||
      operands.size() != static_cast<size_t>(3 * rank + (d.is_store() ? 2 : 1)))
    site.fail("expects a base, one extent, stride and offset per dimension "
              "of the tile " +
              tile.str() + (d.is_store() ? ", then the value" : ""));
  const RuntimeValue &base = *operands[0];
  if (!base.is_pointer() || base.type.is_block())
    site.fail("expects a scalar base pointer, got " + base.type.str());
  auto operand = [&](int part, int dim) {
    return signed_scalar(*operands[1 + part * rank + dim]);
  };
  std::vector<int64_t> shape = tile.shape();
  uint64_t bytes = static_cast<uint64_t>(storage_bytes(base.type.pointee()));
  TileAccess a{
      RuntimeValue(ir::Type::block(base.type, shape)),
      RuntimeValue(ir::Type::block(ir::Type::scalar(ir::Scalar::I1), shape))};
  for (int64_t lane = 0; lane < a.pointers.size(); ++lane) {
    std::vector<int64_t> j = unflatten(lane, shape);
    uint64_t elements = 0; // wraps like the int64 arithmetic it models
    bool inside = true;
    for (int dim = 0; dim < rank; ++dim) {
      int64_t index = operand(2, dim) + j[dim];
      inside = inside && index >= 0 && index < operand(0, dim);
      elements +=
          static_cast<uint64_t>(index) * static_cast<uint64_t>(operand(1, dim));
    }
    a.pointers.bits[lane] = base.at(0) + elements * bytes;
    a.pointers.provenance[lane] = base.provenance_at(0);
    a.inside.bits[lane] = inside;
  }
  return a;
}

} // namespace

RuntimeValue
eval_descriptor_load(const ExecutionSite &site, const Memory &memory,
                     const std::vector<const RuntimeValue *> &operands) {
  TileAccess a = tile_access(site, operands);
  return eval_load(site, memory, {&a.pointers, &a.inside});
}

void eval_descriptor_store(const ExecutionSite &site, const Memory &memory,
                           const std::vector<const RuntimeValue *> &operands,
                           WriteRaces *races) {
  TileAccess a = tile_access(site, operands);
  eval_store(site, memory, {&a.pointers, operands.back(), &a.inside}, races);
}

} // namespace blocc::interp
