#include "python_kernel.h"

#include "errors.h"
#include "fast_arguments.h"
#include "launch_arguments.h"

#include <cstring>

namespace py = pybind11;

namespace blocc::python {

namespace {

// Keywords that are launch options, not arguments (Triton's names where
// Triton has one). A parameter may not take one of these names.
const char *const kOptionNames[] = {"num_warps", "num_stages", "backend",
                                    "check",     "stream",     "target"};

bool is_option(const std::string &name) {
  for (const char *option : kOptionNames)
    if (name == option)
      return true;
  return false;
}

blocc_sink_v1 sink_into(std::string &text) {
  return {&text, [](void *context, const char *data, size_t length) {
            static_cast<std::string *>(context)->append(data, length);
          }};
}

int32_t backend_option(const py::handle &value) {
  std::string name = py::isinstance<py::str>(value)
                         ? std::string(py::str(value))
                         : std::string("?");
  if (name == "auto")
    return BLOCC_BACKEND_AUTO;
  if (name == "interpreter")
    return BLOCC_BACKEND_INTERPRETER;
  if (name == "cpu")
    return BLOCC_BACKEND_CPU;
  if (name == "gpu")
    return BLOCC_BACKEND_GPU;
  raise_error("backend=" + std::string(py::repr(value)) +
              " names no backend; expected 'auto', 'cpu', 'interpreter' or "
              "'gpu'");
}

int32_t check_option(const py::handle &value) {
  if (value.is_none())
    return BLOCC_CHECK_DEFAULT;
  if (PyBool_Check(value.ptr()))
    return value.ptr() == Py_True ? BLOCC_CHECK_BOUNDS : BLOCC_CHECK_OFF;
  if (py::isinstance<py::str>(value)) {
    std::string mode = py::str(value);
    if (mode == "off")
      return BLOCC_CHECK_OFF;
    if (mode == "bounds")
      return BLOCC_CHECK_BOUNDS;
    if (mode == "races")
      return BLOCC_CHECK_RACES;
  }
  raise_error("check=" + std::string(py::repr(value)) +
              " is not a check mode; expected True or 'bounds' (bounds "
              "checks), 'races' (bounds checks and write-race detection), "
              "False or 'off', or None ($BLOCC_CHECK)");
}

int32_t int_option(const char *name, const py::handle &value) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    raise_error(std::string(name) + "=" + std::string(py::repr(value)) +
                ": expected an int");
  long long v = PyLong_AsLongLong(value.ptr());
  if (v < INT32_MIN || v > INT32_MAX || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    raise_error(std::string(name) + "=" + std::string(py::repr(value)) +
                " is out of range");
  }
  return static_cast<int32_t>(v);
}

/// A CUDA stream: its handle as an int (CUstream, cudaStream_t), an object
/// with `cuda_stream` (torch.cuda.Stream), or None (the default stream).
void *stream_option(const py::handle &value) {
  if (value.is_none())
    return nullptr;
  py::object handle = py::reinterpret_borrow<py::object>(value);
  if (py::hasattr(value, "cuda_stream"))
    handle = value.attr("cuda_stream");
  if (!PyLong_Check(handle.ptr()) || PyBool_Check(handle.ptr()))
    raise_error("stream=" + std::string(py::repr(value)) +
                ": expected a CUDA stream handle (an int), an object with "
                "`cuda_stream` (torch.cuda.Stream), or None");
  void *stream = PyLong_AsVoidPtr(handle.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    raise_error("stream=" + std::string(py::repr(value)) +
                " is not a pointer-sized handle");
  }
  return stream;
}

std::array<int64_t, 3> grid_of(const std::string &kernel,
                               const py::object &grid) {
  const auto refuse = [&](const std::string &why) {
    raise_error("kernel '" + kernel +
                "': the grid must be a tuple of 1 to 3 ints, or a callable "
                "taking the meta-parameters (a dict) and returning one; " +
                why);
  };
  std::array<int64_t, 3> dims{1, 1, 1};
  // One int (or numpy integer) is a one-dimensional grid.
  py::sequence items = py::make_tuple(grid);
  if (py::isinstance<py::tuple>(grid) || py::isinstance<py::list>(grid))
    items = grid;
  else if (!PyIndex_Check(grid.ptr()))
    refuse("got " + std::string(py::repr(grid)));
  if (items.size() < 1 || items.size() > 3)
    refuse("got " + std::to_string(items.size()) + " dimensions");
  for (size_t i = 0; i < items.size(); ++i) {
    py::object item = items[i];
    PyObject *index =
        PyBool_Check(item.ptr()) ? nullptr : PyNumber_Index(item.ptr());
    if (!index) {
      PyErr_Clear();
      refuse("dimension " + std::to_string(i) + " is " +
             std::string(py::repr(item)));
    }
    int overflow = 0;
    dims[i] = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (overflow)
      refuse("dimension " + std::to_string(i) + " does not fit in 64 bits");
  }
  return dims;
}

const char *kind_name(int32_t kind) {
  return kind == BLOCC_PARAM_POINTER  ? "pointer"
         : kind == BLOCC_PARAM_SCALAR ? "scalar"
                                      : "constant";
}

} // namespace

struct PythonKernel::Bound {
  std::vector<py::object> values; // per parameter
  blocc_launch_options_v1 options{
      4, 3, BLOCC_BACKEND_AUTO, BLOCC_CHECK_DEFAULT, nullptr, nullptr};
  py::object target = py::str("cpu"); // asm: "cpu", "sm_90", or None
  std::string target_text;
};

PythonKernel::PythonKernel(const blocc_kernel_v1 *abi, py::object owner)
    : abi_(abi), owner_(std::move(owner)) {}

std::string PythonKernel::signature() const {
  std::string s = std::string(abi_->name) + "(";
  for (size_t i = 0; i < abi_->num_params; ++i) {
    const blocc_param_v1 &p = abi_->params[i];
    s += i ? ", " : "";
    s += *p.name ? std::string(p.name) + ": " + p.type_name
                 : std::string(p.type_name);
  }
  return s + ")";
}

std::string PythonKernel::repr() const {
  return "<blocc.Kernel " + signature() + ", defined at " +
         abi_->definition_site + ">";
}

py::list PythonKernel::params() const {
  py::list list;
  for (size_t i = 0; i < abi_->num_params; ++i) {
    const blocc_param_v1 &p = abi_->params[i];
    list.append(
        py::make_tuple(p.name, kind_name(p.kind), p.dtype, p.type_name));
  }
  return list;
}

size_t PythonKernel::num_specializations() const {
  return abi_->num_specializations(abi_->self);
}

PythonKernel::Bound PythonKernel::bind(const py::args &args,
                                       const py::kwargs &kwargs,
                                       bool inspection) const {
  const size_t n = abi_->num_params;
  // Built only for a message: every launch binds its arguments.
  auto kernel = [&] { return "kernel '" + std::string(abi_->name) + "'"; };
  Bound bound;
  bound.values.resize(n);
  if (args.size() > n)
    raise_error(kernel() + " takes " + std::to_string(n) + " arguments (" +
                signature() + "), but " + std::to_string(args.size()) +
                " were given by position");
  for (size_t i = 0; i < args.size(); ++i)
    bound.values[i] = py::reinterpret_borrow<py::object>(args[i]);
  for (auto [key, value] : kwargs) {
    // Compared as Python strings: no std::string per keyword and launch.
    auto is = [&key = key](const char *name) {
      return PyUnicode_CompareWithASCIIString(key.ptr(), name) == 0;
    };
    if (is("num_warps"))
      bound.options.num_warps = int_option("num_warps", value);
    else if (is("num_stages"))
      bound.options.num_stages = int_option("num_stages", value);
    else if (is("backend") && !inspection)
      bound.options.backend = backend_option(value);
    else if (is("check") && !inspection)
      bound.options.check = check_option(value);
    else if (is("stream") && !inspection)
      bound.options.stream = stream_option(value);
    else if (is("target") && inspection)
      bound.target = py::reinterpret_borrow<py::object>(value);
    else {
      size_t i = 0;
      while (i < n && !is(abi_->params[i].name))
        ++i;
      if (i == n) {
        const std::string name = py::str(key);
        raise_error(kernel() + " has no parameter named '" + name + "' (" +
                    signature() + ")" +
                    (is_option(name) ? "; '" + name +
                                           "' is an option of launches, not "
                                           "of kernel.asm, or the reverse"
                                     : std::string()));
      }
      if (bound.values[i])
        raise_error(argument_label(*abi_, i) +
                    " is given twice, by position and by keyword");
      bound.values[i] = py::reinterpret_borrow<py::object>(value);
    }
  }
  std::string missing;
  size_t num_missing = 0;
  for (size_t i = 0; i < n; ++i) {
    if (bound.values[i])
      continue;
    // Inspection needs no memory: a missing pointer is a null one.
    if (inspection && abi_->params[i].kind == BLOCC_PARAM_POINTER) {
      bound.values[i] = py::none();
      continue;
    }
    ++num_missing;
    missing +=
        (missing.empty() ? "" : ", ") +
        (*abi_->params[i].name ? "'" + std::string(abi_->params[i].name) + "'"
                               : "argument " + std::to_string(i + 1));
  }
  if (!missing.empty())
    raise_error(kernel() + " (" + signature() + "): missing " +
                (num_missing == 1 ? "argument " : "arguments ") + missing);
  return bound;
}

py::dict PythonKernel::meta_parameters(const Bound &bound) const {
  py::dict meta;
  for (size_t i = 0; i < abi_->num_params; ++i)
    if (*abi_->params[i].name)
      meta[abi_->params[i].name] = bound.values[i];
  return meta;
}

void PythonKernel::launch(const py::object &grid, const py::args &args,
                          const py::kwargs &kwargs) const {
  Bound bound = bind(args, kwargs, /*inspection=*/false);
  py::object dims = grid;
  if (PyCallable_Check(grid.ptr()))
    dims = grid(meta_parameters(bound));
  std::array<int64_t, 3> g = grid_of(abi_->name, dims);
  // Launches whose arguments pass the fast path's cheap checks skip
  // LaunchArguments, which reads them again and reports the mistakes.
  // On torch tensors a launch joins torch's work, as Triton's do: its
  // current stream on their GPU (a stream= given overrides it).
  FastArguments fast;
  if (fast.read(*abi_, bound.values)) {
    if (!bound.options.stream && fast.torch_device() >= 0)
      bound.options.stream = torch_current_stream(fast.torch_device());
    run(g, fast.data(), fast.size(), bound.options);
    return;
  }
  LaunchArguments converted(*abi_, bound.values,
                            reinterpret_cast<uintptr_t>(bound.options.stream));
  if (!bound.options.stream && converted.torch_device() >= 0)
    bound.options.stream = torch_current_stream(converted.torch_device());
  converted.wait_for_producers(
      reinterpret_cast<uintptr_t>(bound.options.stream));
  run(g, converted.data(), converted.size(), bound.options);
}

void PythonKernel::run(const std::array<int64_t, 3> &grid,
                       const blocc_arg_v1 *args, size_t num_args,
                       const blocc_launch_options_v1 &options) const {
  std::string error;
  int status;
  {
    py::gil_scoped_release released;
    status = abi_->launch(abi_->self, grid.data(), args, num_args, &options,
                          sink_into(error));
  }
  if (status != 0)
    raise_error(error);
}

std::string PythonKernel::inspect(int32_t stage, const char *name,
                                  const Bound &bound) const {
  LaunchArguments converted(*abi_, bound.values, 0);
  std::string text, error;
  int status;
  {
    py::gil_scoped_release released;
    status =
        abi_->inspect(abi_->self, stage, converted.data(), converted.size(),
                      &bound.options, sink_into(text), sink_into(error));
  }
  // A library built with a blocc older than the stage (kernel_abi.h).
  if (status != 0 && error == "unknown stage " + std::to_string(stage))
    raise_error("kernel '" + std::string(abi_->name) +
                "' was built with an older blocc, which cannot show stage '" +
                name + "': rebuild it against this version of blocc");
  if (status != 0)
    raise_error(error);
  return text;
}

py::dict PythonKernel::asm_text(const py::args &args,
                                const py::kwargs &kwargs) const {
  Bound bound = bind(args, kwargs, /*inspection=*/true);
  // Inspection shows the unchecked code whatever BLOCC_CHECK says, as
  // C++'s Target::cpu() does.
  bound.options.check = BLOCC_CHECK_OFF;
  struct StageOf {
    const char *name;
    int32_t stage;
  };
  // Each target's stages in pipeline order, as blocc::Target::stages()
  // lists them (jit/stages.cpp): the dictionary's keys.
  static const StageOf interpreter[] = {{"traced", BLOCC_STAGE_TRACED},
                                        {"ir", BLOCC_STAGE_IR}};
  static const StageOf cpu[] = {{"llir", BLOCC_STAGE_CPU_LLVM},
                                {"asm", BLOCC_STAGE_CPU_ASM}};
  static const StageOf gpu[] = {{"layouts", BLOCC_STAGE_GPU_LAYOUTS},
                                {"llir", BLOCC_STAGE_GPU_LLVM},
                                {"ptx", BLOCC_STAGE_PTX}};
  py::dict result;
  auto add = [&](const auto &stages) {
    for (const StageOf &s : stages)
      result[s.name] = inspect(s.stage, s.name, bound);
  };
  if (!bound.target.is_none() && !py::isinstance<py::str>(bound.target))
    raise_error("target=" + std::string(py::repr(bound.target)) +
                ": expected 'cpu', a GPU architecture ('sm_90'), or None");
  add(interpreter);
  if (bound.target.is_none())
    return result;
  bound.target_text = py::str(bound.target);
  if (bound.target_text == "cpu") {
    add(cpu);
    return result;
  }
  bound.options.gpu_arch = bound.target_text.c_str();
  add(gpu);
  return result;
}

py::object make_kernel(const blocc_kernel_v1 *abi, py::object owner) {
  if (!abi)
    raise_error("no kernel (a null kernel table)");
  if (abi->abi_version != BLOCC_KERNEL_ABI_VERSION)
    raise_error("kernel table of ABI version " +
                std::to_string(abi->abi_version) + "; this blocc reads " +
                std::to_string(BLOCC_KERNEL_ABI_VERSION) +
                ": rebuild the kernels against this version of blocc");
  for (size_t i = 0; i < abi->num_params; ++i)
    if (is_option(abi->params[i].name))
      raise_error(argument_label(*abi, i) +
                  " is named like the launch option '" + abi->params[i].name +
                  "', so Python could not pass it by keyword: rename it");
  return py::cast(PythonKernel(abi, std::move(owner)));
}

void define_kernel_type(py::module_ &module) {
  py::class_<PythonKernel>(module, "Kernel",
                           "A kernel written in C++ with blocc, launched as "
                           "kernel[grid](*args, **constants_and_options).")
      .def_property_readonly("name", &PythonKernel::name)
      .def_property_readonly("signature", &PythonKernel::signature)
      .def_property_readonly("params", &PythonKernel::params,
                             "[(name, kind, dtype, type_name)] per parameter")
      .def_property_readonly("definition_site",
                             [](const PythonKernel &k) {
                               return std::string(k.abi().definition_site);
                             })
      .def_property_readonly("num_specializations",
                             &PythonKernel::num_specializations)
      .def("__repr__", &PythonKernel::repr)
      .def("__getitem__",
           [](py::object self, py::object grid) {
             return GridLaunch{std::move(self), std::move(grid)};
           })
      .def("__call__",
           [](const PythonKernel &k, const py::args &, const py::kwargs &) {
             raise_error("kernel '" + k.name() + "' is launched with a grid: " +
                         k.name() + "[grid](*args), as in Triton");
           })
      .def("asm", &PythonKernel::asm_text,
           "asm(*args, target='cpu', num_warps=4, **constants) -> dict: the "
           "text of each compilation stage for the specialization these "
           "arguments select, keyed by stage name in pipeline order: "
           "'traced' (blocc's IR as traced), 'ir' (after the generic "
           "passes); for target='cpu' 'llir' (LLVM IR) and 'asm' (x86 "
           "assembly); for a GPU target ('sm_80' .. 'sm_90a', compiled "
           "without a GPU) 'layouts' (the IR with each block value's "
           "layout), 'llir' and 'ptx'; target=None: 'traced' and 'ir'. "
           "The texts BLOCC_DUMP prints and C++'s Kernel::asm_for returns. "
           "Pointers may be omitted or None (16-byte aligned null "
           "pointers).");
  py::class_<GridLaunch>(module, "GridLaunch",
                         "kernel[grid], called with the launch's arguments.")
      .def("__call__", [](const GridLaunch &launch, const py::args &args,
                          const py::kwargs &kwargs) {
        launch.kernel.cast<const PythonKernel &>().launch(launch.grid, args,
                                                          kwargs);
      });
}

} // namespace blocc::python
