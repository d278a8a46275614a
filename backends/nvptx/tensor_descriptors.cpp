// gpu-tensor-descriptors: the descriptor accesses of a kernel, split
// between the Tensor Memory Accelerator and plain memory accesses. A
// descriptor access that TMA can copy (tma.h: on sm_90a, a 2-D tile from a
// base, extents and strides the host can encode; for a load, one a
// warpgroup MMA reads from shared memory) is marked tma and stays whole;
// every other descriptor access is rewritten into pointer arithmetic, a bounds
// mask and a masked load or store (ir::lower_tensor_descriptors), which the
// passes after treat as any load or store.
//
//   %a = descriptor_load %pa, %m, %k, %k, %c1, %om, %ok {tma = 1}
//       : tensor<128x64xf16>
//
// It runs first, on block IR: the accesses it rewrites need layouts like
// any other op, and the arithmetic it builds is cleaned up (canonicalize,
// cse, dce) before the passes that decide layouts see it. It decides as
// gpu-accelerate-dot will (the same wgmma_accumulator_layout), so that a
// tile marked tma is read by a warpgroup MMA.
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "backends/nvptx/tma.h"
#include "ir/passes.h"
#include "ir/tensor_descriptor.h"

#include <set>

namespace blocc::nvptx {

void tensor_descriptors(ir::Function &function, const GpuPassOptions &options) {
  std::set<const ir::Operation *> copied;
  function.walk([&](ir::Operation &op) {
    if (!ir::is_descriptor_access(op.code()))
      return;
    if (!op.has_attr(gpu_attr::kTma) &&
        !tma_copy(function, op, options.num_warps, options.arch))
      return;
    op.set_attr(gpu_attr::kTma, int64_t{1});
    copied.insert(&op);
  });
  ir::lower_tensor_descriptors(
      function, [&](const ir::Operation &op) { return !copied.count(&op); });
}

} // namespace blocc::nvptx
