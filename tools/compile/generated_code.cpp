#include "tools/compile/generated_code.h"

#include "tools/compile/cpp_names.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#ifndef BLOCC_VERSION_STRING
#error "the build defines BLOCC_VERSION_STRING (tools/CMakeLists.txt)"
#endif

namespace blocc::compile {

namespace {

/// Names the header defines in the specialization's namespace.
const std::set<std::string> kReserved = {"cpu",       "gpu",  "signature",
                                         "num_warps", "grid", "stream"};

/// A C++ string literal of `text`.
std::string quoted(std::string_view text) {
  std::string s = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += static_cast<char>(c);
    } else if (c == '\n') {
      s += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      s += octal;
    } else {
      s += static_cast<char>(c);
    }
  }
  return s + "\"";
}

std::string scalar_cpp_type(ir::Scalar s) {
  switch (s) {
  case ir::Scalar::I1:
    return "bool";
  case ir::Scalar::I8:
    return "int8_t";
  case ir::Scalar::I16:
    return "int16_t";
  case ir::Scalar::I32:
    return "int32_t";
  case ir::Scalar::I64:
    return "int64_t";
  case ir::Scalar::U8:
    return "uint8_t";
  case ir::Scalar::U16:
    return "uint16_t";
  case ir::Scalar::U32:
    return "uint32_t";
  case ir::Scalar::U64:
    return "uint64_t";
  case ir::Scalar::F64:
    return "double";
  default: // f32; f16, bf16 and fp8 values are passed as float and rounded
    return "float";
  }
}

/// The element type a pointer parameter points to: the storage of f16,
/// bf16 (uint16_t) and fp8 (uint8_t) elements.
std::string element_cpp_type(ir::Scalar s) {
  switch (s) {
  case ir::Scalar::F16:
  case ir::Scalar::BF16:
    return "uint16_t";
  case ir::Scalar::F8E4M3:
  case ir::Scalar::F8E5M2:
    return "uint8_t";
  case ir::Scalar::F32:
    return "float";
  default:
    return scalar_cpp_type(s);
  }
}

struct LaunchParameter {
  const Parameter *parameter;
  std::string name; ///< in the launch function
  std::string type; ///< "const float *", "int32_t"
};

std::vector<LaunchParameter> launch_parameters(const Specialization &s) {
  std::vector<LaunchParameter> out;
  std::set<std::string> used = kReserved;
  std::vector<const Parameter *> runtime = s.runtime_parameters();
  for (size_t i = 0; i < runtime.size(); ++i) {
    const Parameter &p = *runtime[i];
    LaunchParameter l{&p, p.name, ""};
    // blocc_*: the launch functions' own locals.
    if (!is_usable_identifier(l.name) || used.count(l.name) ||
        l.name.rfind("blocc_", 0) == 0)
      l.name = "arg" + std::to_string(i);
    while (used.count(l.name))
      l.name += "_";
    used.insert(l.name);
    l.type =
        p.kind == Parameter::Kind::Pointer
            ? (p.written ? "" : "const ") + element_cpp_type(p.dtype) + " *"
            : scalar_cpp_type(p.dtype) + " ";
    out.push_back(l);
  }
  return out;
}

std::string parameter_list(const std::vector<LaunchParameter> &parameters) {
  std::string s = "const blocc::Grid &grid";
  for (const LaunchParameter &p : parameters)
    s += ", " + p.type + p.name;
  return s;
}

/// `inline constexpr T NAME = value;` for a constant the header can name.
std::string constant_definition(const Parameter &p) {
  if (!is_usable_identifier(p.name) || kReserved.count(p.name))
    return "// " + p.entry + " (not a usable C++ name)\n";
  if (p.dtype == ir::Scalar::I1)
    return "inline constexpr bool " + p.name + " = " + p.value + ";\n";
  if (ir::is_integer(p.dtype)) {
    std::string value = p.value;
    if (p.dtype == ir::Scalar::I64 && value == "-9223372036854775808")
      value = "-9223372036854775807 - 1";
    else if (!ir::is_signed(p.dtype))
      value += "u";
    return "inline constexpr " + scalar_cpp_type(p.dtype) + " " + p.name +
           " = " + value + ";\n";
  }
  double v = std::stod(p.value);
  if (!std::isfinite(v))
    return "// " + p.entry + " (not finite)\n";
  char text[64];
  const bool f64 = p.dtype == ir::Scalar::F64;
  auto end =
      f64 ? std::to_chars(text, text + sizeof text, v).ptr
          : std::to_chars(text, text + sizeof text, static_cast<float>(v)).ptr;
  std::string literal(text, end);
  if (literal.find_first_of(".e") == std::string::npos)
    literal += ".0";
  return "inline constexpr " + std::string(f64 ? "double " : "float ") +
         p.name + " = " + literal + (f64 ? "" : "f") + ";\n";
}

std::string open_namespace(const Specialization &s) {
  return "namespace " + (s.outer.empty() ? "" : s.outer + "::") + s.name +
         " {\n";
}

std::string close_namespace(const Specialization &s) {
  return "} // namespace " + (s.outer.empty() ? "" : s.outer + "::") + s.name +
         "\n";
}

std::string image_list(const GpuCode &gpu) {
  std::string s;
  for (const GpuImage &image : gpu.images)
    s += std::string(s.empty() ? "" : ", ") + "sm_" + std::to_string(image.sm) +
         (image.arch_specific ? "a" : "") + (image.cubin ? " cubin" : " PTX");
  return s;
}

// --- The source file's pieces --------------------------------------------

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

std::string fault_sites_text(const std::vector<runtime::FaultSite> &faults) {
  std::string s;
  for (const runtime::FaultSite &f : faults) {
    const char *form =
        f.form == runtime::FaultSite::Form::LaneFirst ? "LaneFirst"
        : f.form == runtime::FaultSite::Form::NoLane  ? "NoLane"
                                                      : "FalseLane";
    s += "    {" + quoted(f.op) + ", " + quoted(f.message) + ", " +
         shape_text(f.shape) + ", blocc::runtime::FaultSite::Form::" + form +
         "},\n";
  }
  return s;
}

std::string print_sites_text(const std::vector<runtime::cpu::PrintSite> &ps) {
  std::string s;
  for (const runtime::cpu::PrintSite &p : ps) {
    std::string elements = "{", shapes = "{";
    for (size_t k = 0; k < p.elements.size(); ++k) {
      std::string name(ir::scalar_name(p.elements[k]));
      for (char &c : name)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      elements += (k ? ", " : "") + std::string("blocc::ir::Scalar::") + name;
      shapes += (k ? ", " : "") + shape_text(p.shapes[k]);
    }
    s += "    {" + quoted(p.prefix) + ", " + (p.hex ? "true" : "false") + ", " +
         elements + "}, " + shapes + "}},\n";
  }
  return s;
}

std::string argument_checks(const std::string &indent,
                            const std::vector<LaunchParameter> &parameters) {
  std::string s;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const LaunchParameter &l = parameters[i];
    const Parameter &p = *l.parameter;
    if (p.divisibility != 16)
      continue;
    std::string where =
        ", kName, " + std::to_string(i + 1) + ", " + quoted(p.entry) + ");\n";
    if (p.kind == Parameter::Kind::Pointer)
      s += indent + "blocc::aot::require_aligned(" + l.name + ", 16" + where;
    else
      s += indent + "blocc::aot::require_divisible(static_cast<int64_t>(" +
           l.name + "), 16" + where;
  }
  return s;
}

std::string cpu_slot(const LaunchParameter &l) {
  const Parameter &p = *l.parameter;
  if (p.kind == Parameter::Kind::Pointer)
    return "blocc::aot::pointer_slot(" + l.name + ")";
  if (ir::is_signed(p.dtype))
    return "blocc::aot::signed_slot(" + l.name + ")";
  if (ir::is_integer(p.dtype))
    return "blocc::aot::unsigned_slot(" + l.name + ")";
  return "blocc::aot::float_slot(" + l.name + ")";
}

/// The CPU features __builtin_cpu_supports can test (in GCC and Clang
/// alike) among those the code may use; others are not checked.
const char *const kTestableFeatures[] = {"sse4.1",
                                         "sse4.2",
                                         "popcnt",
                                         "avx",
                                         "avx2",
                                         "fma",
                                         "bmi",
                                         "bmi2",
                                         "avx512f",
                                         "avx512bw",
                                         "avx512vl",
                                         "avx512dq",
                                         "avx512cd",
                                         "avx512vbmi",
                                         "avx512ifma",
                                         "avx512vnni",
                                         "avx512vbmi2",
                                         "avx512bitalg",
                                         "avx512vpopcntdq"};

std::string cpu_source(const CpuCode &cpu) {
  std::ostringstream o;
  o << "// --- cpu: " << cpu.target << " ---\n\n";
  o << "const blocc::runtime::cpu::ProgramSites &program_sites() {\n"
    << "  static const blocc::runtime::cpu::ProgramSites sites{\n"
    << "    kName,\n"
    << "    {\n"
    << fault_sites_text(cpu.sites.faults) << "    },\n"
    << "    {\n"
    << print_sites_text(cpu.sites.prints) << "    }};\n"
    << "  return sites;\n"
    << "}\n\n";
  o << "// The features the code may use that __builtin_cpu_supports tests.\n"
    << "const char *missing_cpu_feature() {\n"
    << "  __builtin_cpu_init();\n";
  for (const char *feature : kTestableFeatures)
    for (const std::string &f : cpu.features)
      if (f == feature)
        o << "  if (!__builtin_cpu_supports(\"" << f << "\"))\n"
          << "    return \"" << f << "\";\n";
  o << "  return nullptr;\n"
    << "}\n\n";
  o << "constexpr blocc::aot::CpuKernel cpu_kernel{\n"
    << "    kName, " << cpu.symbol << ", " << cpu.scratch_bytes
    << ", program_sites,\n"
    << "    " << quoted(cpu.target) << ", missing_cpu_feature};\n\n";
  return o.str();
}

std::string cpu_launch(const std::vector<LaunchParameter> &parameters) {
  std::ostringstream o;
  o << "void cpu(" << parameter_list(parameters) << ") {\n"
    << argument_checks("  ", parameters);
  if (parameters.empty()) {
    o << "  blocc::aot::launch_cpu(cpu_kernel, grid, nullptr);\n";
  } else {
    o << "  const uint64_t blocc_args[] = {\n";
    for (const LaunchParameter &l : parameters)
      o << "      " << cpu_slot(l) << ",\n";
    o << "  };\n"
      << "  blocc::aot::launch_cpu(cpu_kernel, grid, blocc_args);\n";
  }
  o << "}\n";
  return o.str();
}

/// The bytes of an image as a C++ initializer: PTX as a raw string
/// literal (NUL-terminated, as the driver reads it), cubins as bytes.
std::string image_definition(const std::string &name, const GpuImage &image) {
  static const std::string kClose = ")blocc_ptx\"";
  if (!image.cubin && image.bytes.find(kClose) == std::string::npos &&
      image.bytes.find('\0') == std::string::npos)
    return "constexpr char " + name + "[] = R\"blocc_ptx(" + image.bytes +
           kClose + ";\n";
  std::string s = "alignas(64) constexpr unsigned char " + name + "[] = {";
  char byte[16];
  for (size_t i = 0; i < image.bytes.size(); ++i) {
    std::snprintf(byte, sizeof byte, "%s0x%02x,", i % 16 ? " " : "\n    ",
                  static_cast<unsigned char>(image.bytes[i]));
    s += byte;
  }
  // PTX kept as bytes still ends with the NUL the driver needs.
  return s + (image.cubin ? "" : " 0x00,") + "\n};\n";
}

/// A value of a tensor map as a C++ initializer of TensorMapValue.
std::string tensor_map_value_text(const cuda::TensorMapValue &v) {
  return "{" + std::to_string(v.argument) + ", " + std::to_string(v.constant) +
         "}";
}

/// One tensor map request as a C++ initializer of TensorMapRequest (the
/// enums as the driver's numbers they are defined as).
std::string tensor_map_request_text(const cuda::TensorMapRequest &r) {
  auto values = [](const std::vector<cuda::TensorMapValue> &vs) {
    std::string s = "{";
    for (size_t i = 0; i < vs.size(); ++i)
      s += (i ? ", " : "") + tensor_map_value_text(vs[i]);
    return s + "}";
  };
  std::string box = "{";
  for (size_t i = 0; i < r.box_dims.size(); ++i)
    box += (i ? ", " : "") + std::to_string(r.box_dims[i]) + "u";
  box += "}";
  return "{blocc::cuda::TensorMapElement(" +
         std::to_string(static_cast<int>(r.element)) + "), " +
         std::to_string(r.address_argument) + ", " + values(r.global_dims) +
         ", " + values(r.global_strides) + ", " + box +
         ", blocc::cuda::TensorMapSwizzle(" +
         std::to_string(static_cast<int>(r.swizzle)) +
         "), blocc::cuda::TensorMapL2Promotion(" +
         std::to_string(static_cast<int>(r.l2_promotion)) + "), " +
         (r.stored ? "true" : "false") + ", " +
         (r.wide_offsets ? "true" : "false") + "}";
}

/// The functions returning the images' tensor map requests, one per
/// distinct list (an architecture's cubin and PTX take the same maps), and
/// per image the name of its function ("" for an image that takes none).
std::string tensor_map_functions(const GpuCode &gpu,
                                 std::vector<std::string> &function_of) {
  std::ostringstream o;
  std::vector<std::pair<std::string, std::string>> written; // list, name
  for (const GpuImage &image : gpu.images) {
    std::string list;
    for (const cuda::TensorMapRequest &r : image.tensor_maps)
      list += "      " + tensor_map_request_text(r) + ",\n";
    std::string name;
    for (const auto &[text, function] : written)
      if (text == list)
        name = function;
    if (!image.tensor_maps.empty() && name.empty()) {
      name = "tensor_maps" + std::to_string(written.size());
      written.emplace_back(list, name);
      o << "const std::vector<blocc::cuda::TensorMapRequest> &" << name
        << "() {\n"
        << "  static const std::vector<blocc::cuda::TensorMapRequest> maps{\n"
        << list << "  };\n"
        << "  return maps;\n"
        << "}\n\n";
    }
    function_of.push_back(name);
  }
  return o.str();
}

std::string gpu_source(const GpuCode &gpu) {
  std::ostringstream o;
  o << "// --- gpu: " << image_list(gpu) << ", " << gpu.num_warps
    << " warps ---\n\n";
  for (size_t i = 0; i < gpu.images.size(); ++i)
    o << image_definition("image" + std::to_string(i), gpu.images[i]) << "\n";
  std::vector<std::string> maps_of;
  o << tensor_map_functions(gpu, maps_of);
  o << "constexpr blocc::aot::GpuImage gpu_images[] = {\n";
  for (size_t i = 0; i < gpu.images.size(); ++i) {
    const GpuImage &image = gpu.images[i];
    o << "    {" << image.sm << ", " << (image.arch_specific ? "true" : "false")
      << ", " << (image.cubin ? "true" : "false") << ", image" << i
      << ", sizeof image" << i << ", " << image.dynamic_shared_bytes
      << (maps_of[i].empty() ? "" : ", " + maps_of[i]) << "},\n";
  }
  o << "};\n\n"
    << "const std::vector<blocc::runtime::FaultSite> &gpu_faults() {\n"
    << "  static const std::vector<blocc::runtime::FaultSite> faults{\n"
    << fault_sites_text(gpu.faults) << "  };\n"
    << "  return faults;\n"
    << "}\n\n"
    << "constexpr blocc::aot::GpuKernel gpu_kernel{\n"
    << "    kName, " << quoted(gpu.entry) << ", " << gpu.num_warps
    << ", gpu_images, " << gpu.images.size() << ", gpu_faults};\n\n";
  return o.str();
}

/// How the PTX entry takes a parameter (backends/nvptx/kernel_abi.h):
/// pointers and 64-bit integers as 64 bits, narrower integers as a 32-bit
/// word, f32 as f32, every other float as f64.
std::string gpu_parameter(const LaunchParameter &l, size_t i) {
  const Parameter &p = *l.parameter;
  const std::string name = "blocc_p" + std::to_string(i);
  if (p.kind == Parameter::Kind::Pointer)
    return "uint64_t " + name + " = blocc::aot::pointer_slot(" + l.name + ")";
  if (ir::is_integer(p.dtype))
    return ir::scalar_bits(p.dtype) > 32
               ? "uint64_t " + name + " = static_cast<uint64_t>(" + l.name + ")"
               : "uint32_t " + name + " = static_cast<uint32_t>(" + l.name +
                     ")";
  if (p.dtype == ir::Scalar::F32)
    return "float " + name + " = " + l.name;
  return "double " + name + " = " + l.name;
}

/// A launch parameter as a blocc::KernelArg (what tensor maps are encoded
/// from).
std::string kernel_arg_text(const LaunchParameter &l) {
  const Parameter &p = *l.parameter;
  if (p.kind == Parameter::Kind::Pointer)
    return "blocc::KernelArg::of_pointer(const_cast<void *>(static_cast<const "
           "void *>(" +
           l.name + ")))";
  if (ir::is_integer(p.dtype))
    return "blocc::KernelArg::of_int(static_cast<int64_t>(" + l.name + "))";
  return "blocc::KernelArg::of_float(static_cast<double>(" + l.name + "))";
}

/// Whether some image of `gpu` takes tensor maps.
bool takes_tensor_maps(const GpuCode &gpu) {
  for (const GpuImage &image : gpu.images)
    if (!image.tensor_maps.empty())
      return true;
  return false;
}

std::string gpu_launch(const std::vector<LaunchParameter> &parameters,
                       bool tensor_maps) {
  std::ostringstream o;
  o << "void gpu(" << parameter_list(parameters) << ", void *stream) {\n"
    << argument_checks("  ", parameters);
  std::string addresses, pointers;
  size_t num_pointers = 0;
  for (size_t i = 0; i < parameters.size(); ++i) {
    o << "  " << gpu_parameter(parameters[i], i) << ";\n";
    addresses += (i ? ", &blocc_p" : "&blocc_p") + std::to_string(i);
    if (parameters[i].parameter->kind == Parameter::Kind::Pointer) {
      pointers += (num_pointers ? ", blocc_p" : "blocc_p") + std::to_string(i);
      ++num_pointers;
    }
  }
  if (!parameters.empty())
    o << "  void *blocc_parameters[] = {" << addresses << "};\n";
  if (num_pointers)
    o << "  const uint64_t blocc_pointers[] = {" << pointers << "};\n";
  if (tensor_maps) {
    // The arguments the tensor maps of an sm_90a image are encoded from.
    o << "  const blocc::KernelArg blocc_args[] = {\n";
    for (const LaunchParameter &l : parameters)
      o << "      " << kernel_arg_text(l) << ",\n";
    o << "  };\n";
  }
  o << "  blocc::aot::launch_gpu(gpu_kernel, grid, "
    << (parameters.empty() ? "nullptr" : "blocc_parameters") << ", "
    << (num_pointers ? "blocc_pointers" : "nullptr") << ", " << num_pointers
    << ", stream"
    << (tensor_maps ? ", blocc_args, " + std::to_string(parameters.size()) : "")
    << ");\n"
    << "}\n";
  return o.str();
}

} // namespace

std::string header_text(const Specialization &s, const Compiled &compiled,
                        const std::string &header_file) {
  std::vector<LaunchParameter> parameters = launch_parameters(s);
  std::ostringstream o;
  o << "// " << header_file << ": written by blocc-compile "
    << BLOCC_VERSION_STRING << "; do not edit.\n"
    << "//\n"
    << "// " << s.origin << ",\n"
    << "// specialized as " << s.signature() << ".\n";
  if (compiled.cpu)
    o << "// cpu: " << compiled.cpu->target << "\n";
  if (compiled.gpu)
    o << "// gpu: " << image_list(*compiled.gpu) << ", "
      << compiled.gpu->num_warps << " warps\n";
  o << "//\n"
    << "// Build: compile the .cpp beside this header";
  if (compiled.cpu)
    o << ", link the .o";
  o << ", and link the\n"
    << "// library blocc_runtime (no LLVM). Launches throw blocc::Error for\n"
    << "// arguments the specialization does not fit (a ':16' pointer that\n"
    << "// is not 16-byte aligned, a ':16' integer that is no multiple of "
       "16)\n"
    << "// and for a program's run-time error, naming the argument or the\n"
    << "// program and op.\n"
    << "#pragma once\n\n"
    << "#include \"ir/error.h\"\n"
    << "#include \"runtime/kernel_args.h\"\n\n"
    << "#include <cstdint>\n\n"
    << open_namespace(s) << "\n"
    << "inline constexpr const char *signature = " << quoted(s.signature())
    << ";\n";
  for (const Parameter &p : s.parameters)
    if (p.kind == Parameter::Kind::Constant)
      o << constant_definition(p);
  if (compiled.cpu)
    o << "inline constexpr const char *cpu_target = "
      << quoted(compiled.cpu->target) << ";\n";
  if (compiled.gpu)
    o << "inline constexpr const char *gpu_code = "
      << quoted(image_list(*compiled.gpu)) << ";\n"
      << "inline constexpr int num_warps = " << compiled.gpu->num_warps
      << ";\n";
  if (compiled.cpu)
    o << "\n/// Runs every program of `grid` on this machine's cores "
         "(BLOCC_NUM_THREADS,\n"
      << "/// else OMP_NUM_THREADS, else all) and returns when all have "
         "run.\n"
      << "/// Pointers to host memory.\n"
      << "void cpu(" << parameter_list(parameters) << ");\n";
  if (compiled.gpu)
    o << "\n/// Queues the programs of `grid` on the GPU whose memory the "
         "pointers\n"
      << "/// address (device pointers, CUdeviceptr values), on `stream` (a "
         "CUstream;\n"
      << "/// nullptr: the default stream of the pointers' context), and "
         "returns\n"
      << "/// without waiting, unless the kernel can stop with an error: "
         "then it\n"
      << "/// waits and throws it. The first launch in a context loads the "
         "code\n"
      << "/// for its device (a cubin, else the PTX).\n"
      << "void gpu(" << parameter_list(parameters)
      << ", void *stream = nullptr);\n";
  o << "\n" << close_namespace(s);
  return o.str();
}

std::string source_text(const Specialization &s, const Compiled &compiled,
                        const std::string &header_file) {
  std::vector<LaunchParameter> parameters = launch_parameters(s);
  std::ostringstream o;
  o << "// Written by blocc-compile " << BLOCC_VERSION_STRING
    << "; do not edit. See " << header_file << ".\n"
    << "#include " << quoted(header_file) << "\n\n"
    << "#include \"runtime/aot/launch.h\"\n\n";
  if (compiled.cpu)
    o << "extern \"C\" int32_t " << compiled.cpu->symbol
      << "(const uint64_t *args,\n"
      << "    blocc::runtime::cpu::ProgramState *state, void *scratch);\n\n";
  o << open_namespace(s) << "\n"
    << "namespace {\n\n"
    << "constexpr const char kName[] = " << quoted(s.name) << ";\n\n";
  if (compiled.cpu)
    o << cpu_source(*compiled.cpu);
  if (compiled.gpu)
    o << gpu_source(*compiled.gpu);
  o << "} // namespace\n";
  if (compiled.cpu)
    o << "\n" << cpu_launch(parameters);
  if (compiled.gpu)
    o << "\n" << gpu_launch(parameters, takes_tensor_maps(*compiled.gpu));
  o << "\n" << close_namespace(s);
  return o.str();
}

} // namespace blocc::compile
