// blocc.Kernel: a C++ kernel (its C interface, blocc/kernel_abi.h) as
// Python sees it, launched as in Triton:
//
//   kernel[grid](*args, BLOCK=1024, num_warps=4)
//
// `grid` is a tuple of 1 to 3 ints (or an int), or a callable that takes
// the launch's meta-parameters (a dict of every named argument, constants
// included) and returns one. Arguments bind to parameters by position or
// by keyword; the other keywords are launch options:
//
//   num_warps, num_stages   GPU launches (num_warps is checked everywhere)
//   backend                 "auto" (default), "cpu", "interpreter", "gpu"
//   check                   checked mode: True/"bounds", "races", False/"off";
//                           None (default) follows $BLOCC_CHECK
//   stream                  GPU launches: a CUstream (int) or an object with
//                           `cuda_stream`; host launches ignore it
//
// Arguments are bound and converted (launch_arguments.h) holding the GIL;
// the launch itself (specializing, compiling, running on the CPU) runs
// without it, so other Python threads go on meanwhile.
#pragma once

#include "blocc/kernel_abi.h"

#include <pybind11/pybind11.h>

#include <array>
#include <string>
#include <vector>

namespace blocc::python {

class PythonKernel {
public:
  /// `owner` keeps the code behind `abi` loaded (a module, a library).
  PythonKernel(const blocc_kernel_v1 *abi, pybind11::object owner);

  const blocc_kernel_v1 &abi() const { return *abi_; }
  std::string name() const { return abi_->name; }
  /// "add(x: bl::Ptr<f32>, ..., BLOCK: bl::Const<i32>)"
  std::string signature() const;
  std::string repr() const;
  /// [(name, kind, dtype, type_name)], kind "pointer", "scalar", "constant".
  pybind11::list params() const;
  size_t num_specializations() const;

  void launch(const pybind11::object &grid, const pybind11::args &args,
              const pybind11::kwargs &kwargs) const;
  /// Every stage of the target, keyed by name in pipeline order:
  /// traced, ir, llir, asm for target "cpu"; traced, ir, layouts, llir,
  /// ptx for a GPU architecture ("sm_90"); traced, ir for target None.
  pybind11::dict asm_text(const pybind11::args &args,
                          const pybind11::kwargs &kwargs) const;

private:
  struct Bound;
  Bound bind(const pybind11::args &args, const pybind11::kwargs &kwargs,
             bool inspection) const;
  /// The named arguments, for a grid callable: {"x": x, ..., "BLOCK": 1024}.
  pybind11::dict meta_parameters(const Bound &bound) const;
  /// Runs the launch (without the GIL) on arguments either path converted.
  void run(const std::array<int64_t, 3> &grid, const blocc_arg_v1 *args,
           size_t num_args, const blocc_launch_options_v1 &options) const;
  /// The text of `stage` (blocc_stage_v1), named `name` in messages.
  std::string inspect(int32_t stage, const char *name,
                      const Bound &bound) const;

  const blocc_kernel_v1 *abi_;
  pybind11::object owner_;
};

/// kernel[grid]: the launch, waiting for its arguments.
struct GridLaunch {
  pybind11::object kernel; // a PythonKernel
  pybind11::object grid;
};

/// Defines blocc.Kernel and the object kernel[grid] returns in `module`.
void define_kernel_type(pybind11::module_ &module);

/// A blocc.Kernel object for `abi`, kept loaded by `owner`. Checks the
/// ABI version.
pybind11::object make_kernel(const blocc_kernel_v1 *abi,
                             pybind11::object owner);

} // namespace blocc::python
