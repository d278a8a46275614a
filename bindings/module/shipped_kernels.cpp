#include "shipped_kernels.h"

#include "blocc/export.h"

// The tutorials' own definitions (tutorials/NN-name/*.h), so that Python
// runs exactly the kernels the tutorials check.
#include "01-vector-add/vector_add.h"
#include "02-fused-softmax/fused_softmax.h"

namespace blocc::python {

std::vector<const blocc_kernel_v1 *> shipped_kernels() {
  return {export_kernel_abi(tutorials::add),
          export_kernel_abi(tutorials::softmax)};
}

} // namespace blocc::python
