// Which program turns a kernel's PTX into GPU code, and running it.
//
// By default the driver's JIT compiles PTX as it loads a module. The
// JIT is the PTX assembler (ptxas) of the CUDA release the driver ships
// with, and older assemblers have known miscompiles: those of CUDA 12.8
// and 13.0 (the JIT of the 580 drivers) pack predicates into general
// registers wrongly in kernels that keep many of them live, so that a
// boolean block stored under a mask read another element's predicate;
// the assembler of CUDA 13.5 compiles the same PTX right. So blocc can
// assemble with a ptxas the user names instead:
//
//   BLOCC_PTXAS=<path of ptxas>   assemble with it (a cubin per kernel
//                                 and architecture, kept in the compile
//                                 cache by the GPU backend)
//   BLOCC_PTXAS=driver            the driver's JIT, without the warning
//   unset or empty                the driver's JIT; blocc warns once when
//                                 it is older than CUDA 13.5
//
// A cubin from a newer ptxas of the same major release loads on an older
// driver (CUDA's minor version compatibility). ptxas ships in the CUDA
// toolkit and on PyPI (nvidia-cuda-nvcc: nvidia/cu13/bin/ptxas).
// No CUDA header here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace blocc::cuda {

/// CUDA releases as the driver API numbers them: 1000 * major + 10 * minor.
constexpr int kFirstAssemblerWithoutKnownMiscompiles = 13050; // 13.5

struct PtxAssembler {
  std::string path;
  int version = 0; // CUDA's numbering, from `ptxas --version`
};

/// The release `ptxas --version` reports ("... release 13.5, V13.5.37"),
/// in CUDA's numbering; 0 when the text names none.
int parse_ptxas_version(std::string_view version_text);

/// "13.5" for 13050.
std::string cuda_release_name(int version);

/// The assembler `setting` (BLOCC_PTXAS's value; nullptr when unset)
/// names: nullopt for the driver's JIT (unset, empty or "driver"). Throws
/// blocc::Error naming BLOCC_PTXAS when the path does not run as a ptxas
/// that reports its release.
std::optional<PtxAssembler> ptx_assembler_from_setting(const char *setting);

/// ptx_assembler_from_setting of BLOCC_PTXAS, read once per process.
const std::optional<PtxAssembler> &ptx_assembler();

/// The architecture the PTX's `.target` line names ("sm_90a"). Throws
/// blocc::Error naming `what` when it has none.
std::string ptx_target(const std::string &ptx, const std::string &what);

/// The cubin `assembler` makes of `ptx` for its `.target`. Throws
/// blocc::Error naming `what` (the kernel) with the assembler's messages
/// when it fails.
std::string assemble_ptx(const PtxAssembler &assembler, const std::string &ptx,
                         const std::string &what);

/// The warning for the driver's JIT of CUDA release `driver_version`
/// when BLOCC_PTXAS is unset ("" when that JIT has no known miscompile,
/// or BLOCC_PTXAS=driver chose it).
std::string driver_assembler_warning(int driver_version, const char *setting);

} // namespace blocc::cuda
