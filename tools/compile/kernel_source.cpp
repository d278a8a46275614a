#include "tools/compile/kernel_source.h"

#include "blocc/kernel_abi.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/written_arguments.h"
#include "tools/compile/signature.h"

#include <dlfcn.h>

#include <fstream>
#include <iostream>
#include <sstream>

#ifndef BLOCC_VERSION_STRING
#error "the build defines BLOCC_VERSION_STRING (tools/CMakeLists.txt)"
#endif

namespace blocc::compile {

namespace {

std::string read_file(const std::string &path, const char *option) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(std::string(option) + ": cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const blocc_kernel_library_v1 &open_library(const std::string &path) {
  // RTLD_LOCAL: the library's copy of blocc stays its own.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw Error("--library: cannot load '" + path + "': " + dlerror());
  auto entry = reinterpret_cast<blocc_export_kernels_fn_v1>(
      dlsym(handle, BLOCC_KERNEL_LIBRARY_SYMBOL_V1));
  if (!entry)
    throw Error("--library: '" + path + "' exports no kernels (no " +
                BLOCC_KERNEL_LIBRARY_SYMBOL_V1 +
                "); list them with BLOCC_EXPORT_KERNELS(...) from "
                "<blocc/export.h> in one of its source files");
  const blocc_kernel_library_v1 *library = entry();
  if (!library || library->abi_version != BLOCC_KERNEL_ABI_VERSION)
    throw Error("--library: '" + path +
                "' was built for another version of blocc's kernel "
                "interface; rebuild it with this blocc");
  if (library->error)
    throw Error("--library: '" + path + "': " + library->error);
  if (std::string(library->blocc_version) != BLOCC_VERSION_STRING)
    std::cerr << "blocc-compile: warning: '" << path
              << "' was built with blocc " << library->blocc_version
              << ", this is blocc " << BLOCC_VERSION_STRING
              << "; rebuild it if its IR does not read back\n";
  return *library;
}

const blocc_kernel_v1 &find_kernel(const blocc_kernel_library_v1 &library,
                                   const std::string &path,
                                   const std::string &name) {
  std::string names;
  for (size_t i = 0; i < library.num_kernels; ++i) {
    if (library.kernels[i]->name == name)
      return *library.kernels[i];
    names += std::string(i ? ", " : "") + "'" + library.kernels[i]->name + "'";
  }
  throw Error("--kernel: '" + path + "' has no kernel named '" + name + "'" +
              (names.empty() ? std::string(" (it exports none)")
                             : "; it has " + names));
}

std::vector<DeclaredParameter> declared_parameters(const blocc_kernel_v1 &k) {
  std::vector<DeclaredParameter> declared;
  for (size_t i = 0; i < k.num_params; ++i) {
    const blocc_param_v1 &p = k.params[i];
    DeclaredParameter d;
    d.name = p.name ? p.name : "";
    d.kind = p.kind == BLOCC_PARAM_POINTER  ? Parameter::Kind::Pointer
             : p.kind == BLOCC_PARAM_SCALAR ? Parameter::Kind::Scalar
                                            : Parameter::Kind::Constant;
    std::optional<ir::Scalar> dtype = ir::scalar_from_name(p.dtype);
    if (!dtype)
      throw Error("kernel '" + std::string(k.name) + "': parameter " +
                  std::to_string(i + 1) + " has the unknown type '" + p.dtype +
                  "'; rebuild the library with this blocc");
    d.dtype = *dtype;
    d.type_name = p.type_name ? p.type_name : "";
    declared.push_back(d);
  }
  return declared;
}

void append(void *context, const char *text, size_t length) {
  static_cast<std::string *>(context)->append(text, length);
}

/// The arguments the library's kernel is specialized with: values that
/// have the signature's properties (an address 16-byte aligned or not, an
/// integer a multiple of 16 or not), and the constants.
std::vector<blocc_arg_v1>
representative_arguments(const std::vector<Parameter> &parameters,
                         std::vector<std::string> &dtype_names) {
  dtype_names.clear();
  for (const Parameter &p : parameters)
    dtype_names.emplace_back(ir::scalar_name(p.dtype));
  std::vector<blocc_arg_v1> args;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Parameter &p = parameters[i];
    blocc_arg_v1 a{};
    a.device = -1;
    a.size_bytes = BLOCC_UNKNOWN_SIZE;
    a.dtype = dtype_names[i].c_str();
    a.description = "blocc-compile's signature";
    const bool aligned = p.divisibility == 16;
    if (p.kind == Parameter::Kind::Pointer) {
      a.kind = BLOCC_ARG_POINTER;
      a.pointer =
          reinterpret_cast<void *>(uintptr_t{aligned ? 0x10000u : 0x10001u});
    } else if (ir::is_integer(p.dtype)) {
      a.kind = BLOCC_ARG_INT;
      if (p.kind == Parameter::Kind::Constant)
        a.int_value = p.dtype == ir::Scalar::I1 ? (p.value == "true")
                                                : std::stoll(p.value);
      else // 3: a value no specialization assumes (not 1, not 16k)
        a.int_value = aligned ? 16 : p.dtype == ir::Scalar::I1 ? 1 : 3;
    } else {
      a.kind = BLOCC_ARG_FLOAT;
      a.float_value =
          p.kind == Parameter::Kind::Constant ? std::stod(p.value) : 1.0;
    }
    args.push_back(a);
  }
  return args;
}

Specialization from_library(const Options &options) {
  const blocc_kernel_library_v1 &library = open_library(options.library);
  const blocc_kernel_v1 &k =
      find_kernel(library, options.library, options.kernel);
  Specialization s;
  s.kernel = k.name;
  s.origin = "kernel '" + s.kernel + "' (" + k.definition_site + ") of " +
             options.library;
  s.parameters =
      parse_signature(options.signature, s.kernel, declared_parameters(k));
  std::vector<std::string> dtype_names;
  std::vector<blocc_arg_v1> args =
      representative_arguments(s.parameters, dtype_names);
  blocc_launch_options_v1 launch{};
  launch.num_warps = options.num_warps;
  std::string error;
  blocc_sink_v1 out{&s.ir_text, append}, errors{&error, append};
  if (k.inspect(k.self, BLOCC_STAGE_IR, args.data(), args.size(), &launch, out,
                errors) != 0)
    throw Error("kernel '" + s.kernel + "' specialized as '" + s.signature() +
                "': " + error);
  return s;
}

Specialization from_ir_file(const Options &options, ir::Function &f) {
  Specialization s;
  s.kernel = f.name();
  s.origin = "function '" + f.name() + "' of " + options.ir_file;
  for (size_t i = 0; i < f.num_arguments(); ++i) {
    const ir::Type &type = f.argument(i)->type();
    const ir::ArgumentInfo &info = f.argument_info(i);
    Parameter p;
    p.name = info.name.empty() ? "arg" + std::to_string(i) : info.name;
    if (type.is_block())
      throw Error("--ir: function '" + f.name() + "' argument " +
                  std::to_string(i) + " is a block (" + type.str() +
                  "); kernels take pointers and scalars");
    p.kind =
        type.is_pointer() ? Parameter::Kind::Pointer : Parameter::Kind::Scalar;
    p.dtype = type.is_pointer() ? type.pointee() : type.element();
    p.divisibility = info.divisibility % 16 == 0 ? 16 : 1;
    p.entry = p.name + "=" + (type.is_pointer() ? "*" : "") +
              std::string(ir::scalar_name(p.dtype)) +
              (p.divisibility == 16 ? ":16" : "");
    s.parameters.push_back(p);
  }
  return s;
}

std::unique_ptr<ir::Function> parse(const std::string &text,
                                    const std::string &where) {
  std::unique_ptr<ir::Function> f;
  try {
    f = ir::parse_function(text);
  } catch (const Error &e) {
    throw Error(where + ":" + e.what());
  }
  try {
    ir::verify(*f);
  } catch (const Error &e) {
    throw Error(where + ": function '" + f->name() +
                "' is invalid: " + e.what());
  }
  return f;
}

} // namespace

LoadedKernel load_kernel(const Options &options) {
  LoadedKernel loaded;
  if (!options.library.empty()) {
    loaded.specialization = from_library(options);
    loaded.function = parse(loaded.specialization.ir_text,
                            "the IR " + options.library + " traced");
  } else {
    std::string text = read_file(options.ir_file, "--ir");
    loaded.function = parse(text, options.ir_file);
    if (!options.kernel.empty() && loaded.function->name() != options.kernel)
      throw Error("--kernel: '" + options.ir_file + "' holds function '" +
                  loaded.function->name() + "', not '" + options.kernel + "'");
    loaded.specialization = from_ir_file(options, *loaded.function);
    loaded.specialization.ir_text = ir::print(*loaded.function);
  }
  Specialization &s = loaded.specialization;
  s.name = options.name;
  s.outer = options.outer_namespace;
  // Which pointers the kernel writes through: the launch functions take
  // the others as pointers to const.
  std::vector<Parameter *> runtime;
  for (Parameter &p : s.parameters)
    if (p.kind != Parameter::Kind::Constant)
      runtime.push_back(&p);
  ir::Function &f = *loaded.function;
  if (runtime.size() != f.num_arguments())
    throw Error("internal: kernel '" + s.kernel + "' traced to " +
                std::to_string(f.num_arguments()) + " arguments for " +
                std::to_string(runtime.size()) + " runtime parameters");
  std::vector<ir::Value *> arguments;
  for (size_t i = 0; i < f.num_arguments(); ++i)
    arguments.push_back(f.argument(i));
  std::vector<bool> written =
      ir::arguments_written(f, arguments.size(), arguments);
  for (size_t i = 0; i < runtime.size(); ++i)
    runtime[i]->written = written[i];
  return loaded;
}

} // namespace blocc::compile
