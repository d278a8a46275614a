#include "tools/compile/signature.h"

#include "ir/error.h"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>

namespace blocc::compile {

namespace {

std::string trim(const std::string &s) {
  size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos)
    return "";
  size_t end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string> split_entries(const std::string &signature) {
  std::vector<std::string> entries;
  size_t begin = 0;
  while (true) {
    size_t end = signature.find(',', begin);
    entries.push_back(trim(signature.substr(
        begin, end == std::string::npos ? std::string::npos : end - begin)));
    if (end == std::string::npos)
      return entries;
    begin = end + 1;
  }
}

/// "f32" and Triton's "fp32"; nullopt for anything else.
std::optional<ir::Scalar> element_type(const std::string &name) {
  if (auto s = ir::scalar_from_name(name))
    return s;
  if (name == "fp16")
    return ir::Scalar::F16;
  if (name == "fp32")
    return ir::Scalar::F32;
  if (name == "fp64")
    return ir::Scalar::F64;
  return std::nullopt;
}

std::string parameter_name(const DeclaredParameter &p, size_t index) {
  return p.name.empty() ? "arg" + std::to_string(index) : p.name;
}

/// "parameter 1 'x' (bl::Ptr<f32>)", 1-based as the C++ messages count.
std::string describe(const DeclaredParameter &p, size_t index) {
  return "parameter " + std::to_string(index + 1) + " '" +
         parameter_name(p, index) + "' (" + p.type_name + ")";
}

bool fits(long long v, ir::Scalar s) {
  switch (s) {
  case ir::Scalar::I1:
    return v == 0 || v == 1;
  case ir::Scalar::I8:
    return v >= -128 && v <= 127;
  case ir::Scalar::I16:
    return v >= -32768 && v <= 32767;
  case ir::Scalar::I32:
    return v >= std::numeric_limits<int32_t>::min() &&
           v <= std::numeric_limits<int32_t>::max();
  case ir::Scalar::U8:
    return v >= 0 && v <= 255;
  case ir::Scalar::U16:
    return v >= 0 && v <= 65535;
  case ir::Scalar::U32:
    return v >= 0 && v <= std::numeric_limits<uint32_t>::max();
  case ir::Scalar::U64:
    return v >= 0;
  default:
    return true;
  }
}

/// A constant's text, checked against the parameter's type.
std::string constant_value(const std::string &text, ir::Scalar dtype,
                           const std::string &where) {
  if (dtype == ir::Scalar::I1) {
    if (text == "true" || text == "1")
      return "true";
    if (text == "false" || text == "0")
      return "false";
    throw Error(where + " takes true or false, got '" + text + "'");
  }
  errno = 0;
  char *end = nullptr;
  if (ir::is_integer(dtype)) {
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0')
      throw Error(where + " takes an integer constant, got '" + text + "'");
    if (errno == ERANGE || !fits(v, dtype))
      throw Error(where + ": " + text + " does not fit in " +
                  std::string(ir::scalar_name(dtype)));
    return std::to_string(v);
  }
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || text.find_first_of("xX") != text.npos)
    throw Error(where + " takes a number, got '" + text + "'");
  (void)v;
  return text;
}

} // namespace

std::vector<Parameter>
parse_signature(const std::string &signature, const std::string &kernel,
                const std::vector<DeclaredParameter> &declared) {
  std::vector<std::string> entries = split_entries(signature);
  if (entries.size() == 1 && entries[0].empty())
    entries.clear();
  if (entries.size() != declared.size()) {
    std::string list;
    for (size_t i = 0; i < declared.size(); ++i)
      list += (i ? ", " : "") + parameter_name(declared[i], i) + " (" +
              declared[i].type_name + ")";
    throw Error("--signature: " + std::to_string(entries.size()) +
                (entries.size() == 1 ? " entry" : " entries") +
                " for kernel '" + kernel + "', which takes " +
                std::to_string(declared.size()) + " parameters" +
                (list.empty() ? "" : ": " + list) +
                "; give one entry per parameter, in order, e.g. '" +
                example_signature(declared) + "'");
  }
  std::vector<Parameter> parameters;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DeclaredParameter &d = declared[i];
    const std::string where = "--signature: entry " + std::to_string(i + 1) +
                              " '" + entries[i] + "' for " + describe(d, i);
    std::string spec = entries[i];
    if (size_t equals = spec.find('='); equals != std::string::npos) {
      std::string name = trim(spec.substr(0, equals));
      spec = trim(spec.substr(equals + 1));
      if (name != parameter_name(d, i))
        throw Error(where + ": names '" + name +
                    "'; the entries follow the parameters' order");
    }
    if (spec.empty())
      throw Error(where + ": is empty");
    Parameter p;
    p.name = parameter_name(d, i);
    p.kind = d.kind;
    p.dtype = d.dtype;
    if (d.kind == Parameter::Kind::Constant) {
      p.value = constant_value(spec, d.dtype, where);
      p.entry = p.name + "=" + p.value;
      parameters.push_back(p);
      continue;
    }
    bool pointer = spec[0] == '*';
    if (pointer != (d.kind == Parameter::Kind::Pointer))
      throw Error(where + ": the kernel takes " +
                  (d.kind == Parameter::Kind::Pointer
                       ? "a pointer here ('*" +
                             std::string(ir::scalar_name(d.dtype)) + "')"
                       : "a scalar here ('" +
                             std::string(ir::scalar_name(d.dtype)) + "')"));
    std::string type = spec.substr(pointer ? 1 : 0);
    std::string divisor;
    if (size_t colon = type.find(':'); colon != std::string::npos) {
      divisor = type.substr(colon + 1);
      type = type.substr(0, colon);
    }
    std::optional<ir::Scalar> dtype = element_type(type);
    if (!dtype)
      throw Error(where + ": '" + type +
                  "' is not an element type (f32, f16, bf16, f64, i8, i16, "
                  "i32, i64, u8, u16, u32, u64, i1, f8e4m3, f8e5m2)");
    if (*dtype != d.dtype)
      throw Error(where + ": the kernel's type is " +
                  std::string(ir::scalar_name(d.dtype)) + ", not " +
                  std::string(ir::scalar_name(*dtype)));
    if (!divisor.empty()) {
      if (divisor != "16" && divisor != "1")
        throw Error(where + ": ':" + divisor +
                    "' is not a specialization; ':16' (aligned to, or a "
                    "multiple of, 16) or ':1' (nothing assumed)");
      if (!pointer && !ir::is_integer(d.dtype) && divisor == "16")
        throw Error(where + ": ':16' applies to pointers and integers only");
      if (!pointer && d.dtype == ir::Scalar::I1 && divisor == "16")
        throw Error(where + ": ':16' applies to pointers and integers only");
      p.divisibility = std::stoi(divisor);
    }
    p.entry = p.name + "=" + (pointer ? "*" : "") +
              std::string(ir::scalar_name(d.dtype)) +
              (p.divisibility == 16 ? ":16" : "");
    parameters.push_back(p);
  }
  return parameters;
}

std::string example_signature(const std::vector<DeclaredParameter> &declared) {
  std::string s;
  for (size_t i = 0; i < declared.size(); ++i) {
    const DeclaredParameter &d = declared[i];
    s += (i ? "," : "") + parameter_name(d, i) + "=";
    std::string type(ir::scalar_name(d.dtype));
    switch (d.kind) {
    case Parameter::Kind::Pointer:
      s += "*" + type + ":16";
      break;
    case Parameter::Kind::Scalar:
      s += type;
      break;
    case Parameter::Kind::Constant:
      s += d.dtype == ir::Scalar::I1 ? "true"
           : ir::is_integer(d.dtype) ? "<integer>"
                                     : "<number>";
      break;
    }
  }
  return s;
}

} // namespace blocc::compile
