#include "shipped_kernels.h"

#include "blocc/export.h"

// The tutorials' own definitions (tutorials/NN-name/*.h), so that Python
// runs exactly the kernels the tutorials check.
#include "01-vector-add/vector_add.h"
#include "02-fused-softmax/fused_softmax.h"
#include "03-matrix-multiplication/matmul.h"
#include "04-low-memory-dropout/seeded_dropout.h"
#include "05-layer-norm/layer_norm.h"
#include "06-fused-attention/attention.h"
#include "06-fused-attention/attention_backward.h"
#include "07-gelu/gelu.h"
#include "08-rope/rope.h"
#include "09-mean/mean.h"

namespace blocc::python {

std::vector<const blocc_kernel_v1 *> shipped_kernels() {
  return {export_kernel_abi(tutorials::add),
          export_kernel_abi(tutorials::softmax),
          export_kernel_abi(tutorials::matmul),
          export_kernel_abi(tutorials::matmul_bf16),
          export_kernel_abi(tutorials::matmul_fp8),
          export_kernel_abi(tutorials::matmul_persistent),
          export_kernel_abi(tutorials::matmul_persistent_bf16),
          export_kernel_abi(tutorials::matmul_tma),
          export_kernel_abi(tutorials::matmul_tma_bf16),
          export_kernel_abi(tutorials::matmul_tma_ws),
          export_kernel_abi(tutorials::matmul_tma_ws_bf16),
          export_kernel_abi(tutorials::matmul_persistent_tma),
          export_kernel_abi(tutorials::seeded_dropout),
          export_kernel_abi(tutorials::seeded_dropout4x),
          export_kernel_abi(tutorials::layer_norm_fwd),
          export_kernel_abi(tutorials::layer_norm_fwd_row),
          export_kernel_abi(tutorials::layer_norm_bwd_dx),
          export_kernel_abi(tutorials::layer_norm_bwd_dwdb),
          export_kernel_abi(tutorials::attention),
          export_kernel_abi(tutorials::attention_ws),
          export_kernel_abi(tutorials::attention_fwd_lse),
          export_kernel_abi(tutorials::attention_bwd_preprocess),
          export_kernel_abi(tutorials::attention_bwd_dkdv),
          export_kernel_abi(tutorials::attention_bwd_dq),
          export_kernel_abi(tutorials::gelu),
          export_kernel_abi(tutorials::gelu_f16),
          export_kernel_abi(tutorials::rope),
          export_kernel_abi(tutorials::partial_sums)};
}

} // namespace blocc::python
