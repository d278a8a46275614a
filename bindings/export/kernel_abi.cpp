// A kernel's C interface (blocc/kernel_abi.h): the launch arguments, options
// and results translated between the C structs and blocc's own types, and
// every exception turned into a return code and a message, since none may
// cross the C boundary.
#include "blocc/export.h"

#include "ir/error.h"
#include "ir/type.h"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#ifndef BLOCC_VERSION_STRING
#error "the build defines BLOCC_VERSION_STRING (bindings/CMakeLists.txt)"
#endif

namespace blocc {

namespace {

/// A kernel's C table and the strings it points into.
struct ExportedKernel {
  detail::KernelBase *kernel = nullptr;
  std::deque<std::string> strings; // stable addresses
  std::vector<blocc_param_v1> params;
  blocc_kernel_v1 abi{};

  const char *keep(std::string s) {
    return strings.emplace_back(std::move(s)).c_str();
  }
};

void write(blocc_sink_v1 sink, const std::string &text) {
  if (sink.write)
    sink.write(sink.context, text.data(), text.size());
}

detail::KernelBase &kernel_of(void *self) {
  return *static_cast<ExportedKernel *>(self)->kernel;
}

/// The element type `name` names; `what` (called only for the message)
/// says whose it is.
template <typename What> DType element_type(const char *name, What &&what) {
  auto dtype = ir::scalar_from_name(name ? name : "");
  if (!dtype)
    throw Error(what() + ": '" + (name ? name : "") +
                "' is not an element type");
  return *dtype;
}

/// `text` as element_type's `what`.
auto named(const char *text) {
  return [text] { return std::string(text); };
}

std::vector<detail::ArgValue> arg_values(detail::KernelBase &kernel,
                                         const blocc_arg_v1 *args,
                                         size_t num_args) {
  std::vector<detail::ArgValue> values;
  values.reserve(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const blocc_arg_v1 &a = args[i];
    detail::ArgValue v;
    v.cpp_type = a.description ? a.description : "";
    switch (a.kind) {
    case BLOCC_ARG_POINTER:
      v.kind = detail::ArgValue::Kind::Pointer;
      v.dtype = element_type(a.dtype, [&] {
        return "kernel '" + kernel.name() + "', argument " +
               std::to_string(i + 1);
      });
      v.read_only = a.read_only != 0;
      v.pointer = a.pointer;
      v.size_bytes = a.size_bytes == BLOCC_UNKNOWN_SIZE
                         ? KernelArg::kUnknownSize
                         : static_cast<size_t>(a.size_bytes);
      v.device = a.device;
      break;
    case BLOCC_ARG_INT:
      v.kind = detail::ArgValue::Kind::Int;
      v.dtype =
          a.dtype ? element_type(a.dtype, named("an integer argument")) : int64;
      v.int_value = a.int_value;
      break;
    case BLOCC_ARG_FLOAT:
      v.kind = detail::ArgValue::Kind::Float;
      v.dtype =
          a.dtype ? element_type(a.dtype, named("a float argument")) : float64;
      v.float_value = a.float_value;
      break;
    default:
      throw Error("kernel '" + kernel.name() + "', argument " +
                  std::to_string(i + 1) + ": unknown argument kind " +
                  std::to_string(a.kind));
    }
    values.push_back(std::move(v));
  }
  return values;
}

LaunchOptions launch_options(const blocc_launch_options_v1 *o) {
  LaunchOptions options;
  if (!o)
    return options;
  options.num_warps = o->num_warps;
  options.num_stages = o->num_stages;
  switch (o->backend) {
  case BLOCC_BACKEND_AUTO:
    options.backend = Backend::Auto;
    break;
  case BLOCC_BACKEND_INTERPRETER:
    options.backend = Backend::Interpreter;
    break;
  case BLOCC_BACKEND_CPU:
    options.backend = Backend::Cpu;
    break;
  case BLOCC_BACKEND_GPU:
    options.backend = Backend::Gpu;
    break;
  default:
    throw Error("unknown backend " + std::to_string(o->backend));
  }
  switch (o->check) {
  case BLOCC_CHECK_DEFAULT:
    options.check = Check::Default;
    break;
  case BLOCC_CHECK_OFF:
    options.check = Check::Off;
    break;
  case BLOCC_CHECK_BOUNDS:
    options.check = Check::Bounds;
    break;
  case BLOCC_CHECK_RACES:
    options.check = Check::Races;
    break;
  default:
    throw Error("unknown check mode " + std::to_string(o->check));
  }
  options.stream = o->stream;
  return options;
}

/// Runs `body`, turning any exception into a message and a nonzero result.
template <typename Body> int guarded(blocc_sink_v1 error, Body &&body) {
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    write(error, e.what());
  } catch (...) {
    write(error, "an unknown C++ exception");
  }
  return 1;
}

int launch(void *self, const int64_t grid[3], const blocc_arg_v1 *args,
           size_t num_args, const blocc_launch_options_v1 *options,
           blocc_sink_v1 error) {
  return guarded(error, [&] {
    detail::KernelBase &kernel = kernel_of(self);
    Grid g; // no source location: the launch is Python's, not a C++ line
    g.x = grid[0];
    g.y = grid[1];
    g.z = grid[2];
    kernel.launch(g, arg_values(kernel, args, num_args),
                  launch_options(options), detail::Caller::Python);
  });
}

/// The target and stage a blocc_stage_v1 names.
std::pair<Target, Stage> stage_of(int32_t stage,
                                  const blocc_launch_options_v1 *options) {
  const std::string arch =
      options && options->gpu_arch ? options->gpu_arch : "sm_90";
  const int num_warps = options ? options->num_warps : 4;
  const int num_stages = options ? options->num_stages : 3;
  Check check = options ? launch_options(options).check : Check::Off;
  if (check == Check::Default)
    check = Check::Off;
  switch (stage) {
  case BLOCC_STAGE_TRACED:
    return {Target::interpreter(), Stage::Traced};
  case BLOCC_STAGE_IR:
    return {Target::interpreter(), Stage::Ir};
  case BLOCC_STAGE_CPU_LLVM:
    return {Target::cpu(check), Stage::Llir};
  case BLOCC_STAGE_CPU_ASM:
    return {Target::cpu(check), Stage::Asm};
  case BLOCC_STAGE_GPU_LAYOUTS:
    return {Target::gpu(arch, num_warps, num_stages), Stage::Layouts};
  case BLOCC_STAGE_GPU_LLVM:
    return {Target::gpu(arch, num_warps, num_stages), Stage::Llir};
  case BLOCC_STAGE_PTX:
    return {Target::gpu(arch, num_warps, num_stages), Stage::Ptx};
  default:
    throw Error("unknown stage " + std::to_string(stage));
  }
}

int inspect(void *self, int32_t stage, const blocc_arg_v1 *args,
            size_t num_args, const blocc_launch_options_v1 *options,
            blocc_sink_v1 out, blocc_sink_v1 error) {
  return guarded(error, [&] {
    detail::KernelBase &kernel = kernel_of(self);
    auto [target, which] = stage_of(stage, options);
    write(out, kernel.inspect(arg_values(kernel, args, num_args), target,
                              {which})[which]);
  });
}

size_t num_specializations(void *self) {
  return kernel_of(self).num_specializations();
}

std::unique_ptr<ExportedKernel> make_exported(detail::KernelBase &kernel) {
  auto e = std::make_unique<ExportedKernel>();
  e->kernel = &kernel;
  for (const detail::ParamInfo &p : kernel.params()) {
    blocc_param_v1 param{};
    param.name = e->keep(p.name);
    param.kind =
        p.kind == detail::ParamInfo::Kind::Pointer  ? BLOCC_PARAM_POINTER
        : p.kind == detail::ParamInfo::Kind::Scalar ? BLOCC_PARAM_SCALAR
                                                    : BLOCC_PARAM_CONSTANT;
    param.dtype = e->keep(std::string(ir::scalar_name(p.dtype)));
    param.type_name = e->keep(p.type_name);
    e->params.push_back(param);
  }
  e->abi.abi_version = BLOCC_KERNEL_ABI_VERSION;
  e->abi.name = e->keep(kernel.name());
  e->abi.num_params = e->params.size();
  e->abi.params = e->params.data();
  e->abi.definition_site = e->keep(kernel.definition_site());
  e->abi.self = e.get();
  e->abi.launch = launch;
  e->abi.inspect = inspect;
  e->abi.num_specializations = num_specializations;
  return e;
}

/// Every kernel exported by this copy of blocc. Never freed: Python holds
/// pointers into the tables for as long as the process runs.
struct Registry {
  std::mutex mutex;
  std::map<detail::KernelBase *, std::unique_ptr<ExportedKernel>> kernels;
};
Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

} // namespace

const blocc_kernel_v1 *export_kernel_abi(detail::KernelBase &kernel) {
  if (!kernel.definition_error().empty())
    throw Error(kernel.definition_error());
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto &slot = r.kernels[&kernel];
  if (!slot)
    slot = make_exported(kernel);
  return &slot->abi;
}

const blocc_kernel_library_v1 *
export_kernel_library(const std::vector<detail::KernelBase *> &kernels) {
  struct Library {
    std::vector<const blocc_kernel_v1 *> kernels;
    std::string error;
    blocc_kernel_library_v1 abi{};
  };
  auto *library = new Library; // lives as long as the shared library
  try {
    std::map<std::string, const detail::KernelBase *> by_name;
    for (detail::KernelBase *k : kernels) {
      auto [it, fresh] = by_name.emplace(k->name(), k);
      if (!fresh && it->second != k)
        throw Error("two exported kernels are named '" + k->name() +
                    "' (defined at " + it->second->definition_site() + " and " +
                    k->definition_site() + "): give each its own name");
      if (fresh)
        library->kernels.push_back(export_kernel_abi(*k));
    }
  } catch (const std::exception &e) {
    library->error = e.what();
    library->kernels.clear();
  }
  library->abi.abi_version = BLOCC_KERNEL_ABI_VERSION;
  library->abi.blocc_version = BLOCC_VERSION_STRING;
  library->abi.num_kernels = library->kernels.size();
  library->abi.kernels = library->kernels.data();
  library->abi.error =
      library->error.empty() ? nullptr : library->error.c_str();
  return &library->abi;
}

} // namespace blocc
