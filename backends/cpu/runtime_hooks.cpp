#include "backends/cpu/runtime_hooks.h"

#include "backends/cpu/kernel_info.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>

namespace blocc::cpu {

using runtime::cpu::ProgramState;

std::string describe_lane(int64_t lane, const std::vector<int64_t> &shape) {
  std::string s = "lane " + std::to_string(lane);
  if (shape.size() > 1) {
    std::vector<int64_t> index(shape.size());
    int64_t rest = lane;
    for (size_t i = shape.size(); i-- > 0;) {
      index[i] = rest % shape[i];
      rest /= shape[i];
    }
    s += " (index (";
    for (size_t i = 0; i < index.size(); ++i)
      s += (i ? ", " : "") + std::to_string(index[i]);
    s += "))";
  }
  return s;
}

namespace {

const KernelInfo &info_of(const ProgramState *state) {
  return *static_cast<const KernelInfo *>(state->kernel);
}

/// The exact value of f16 bits (every f16 is a float).
float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0x1f)
    magnitude = mantissa ? std::nanf("") : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400),
                           static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

} // namespace

std::string program_str(const ProgramState *state) {
  return "kernel '" + info_of(state).name + "', program (" +
         std::to_string(state->program[0]) + ", " +
         std::to_string(state->program[1]) + ", " +
         std::to_string(state->program[2]) + ")";
}

/// Signed/unsigned decimal, the shortest float text that reads back
/// exactly, or with `hex` (and for pointers) the bit pattern.
std::string format_element(const unsigned char *p, ir::Scalar s, bool hex) {
  int bits = s == ir::Scalar::Ptr ? 64 : ir::scalar_bits(s);
  int bytes = bits < 8 ? 1 : bits / 8;
  uint64_t raw = 0;
  std::memcpy(&raw, p, bytes); // little endian
  if (s == ir::Scalar::I1)
    raw = raw != 0;
  if (hex || s == ir::Scalar::Ptr) {
    int digits = bits < 4 ? 1 : bits / 4;
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "0x%0*llx", digits,
                  static_cast<unsigned long long>(raw));
    return buffer;
  }
  if (ir::is_signed(s)) {
    int64_t v = static_cast<int64_t>(raw << (64 - bits)) >> (64 - bits);
    return std::to_string(v);
  }
  if (ir::is_integer(s))
    return std::to_string(raw);
  char buffer[64];
  std::to_chars_result end;
  switch (s) {
  case ir::Scalar::F64:
    end = std::to_chars(buffer, buffer + sizeof buffer,
                        std::bit_cast<double>(raw));
    break;
  case ir::Scalar::F32:
    end = std::to_chars(buffer, buffer + sizeof buffer,
                        std::bit_cast<float>(static_cast<uint32_t>(raw)));
    break;
  case ir::Scalar::F16:
    end = std::to_chars(buffer, buffer + sizeof buffer,
                        half_to_float(static_cast<uint16_t>(raw)));
    break;
  case ir::Scalar::BF16:
    end = std::to_chars(buffer, buffer + sizeof buffer,
                        std::bit_cast<float>(static_cast<uint32_t>(raw) << 16));
    break;
  default:
    return "?";
  }
  return std::string(buffer, end.ptr);
}

const RuntimeHook *runtime_hooks(int *count) {
  static const RuntimeHook hooks[] = {
      {"blocc_cpu_fault", reinterpret_cast<void *>(&blocc_cpu_fault)},
      {"blocc_cpu_print", reinterpret_cast<void *>(&blocc_cpu_print)},
      {"blocc_cpu_access_fault",
       reinterpret_cast<void *>(&blocc_cpu_access_fault)},
      {"blocc_cpu_record_stores",
       reinterpret_cast<void *>(&blocc_cpu_record_stores)},
  };
  *count = static_cast<int>(sizeof hooks / sizeof hooks[0]);
  return hooks;
}

} // namespace blocc::cpu

extern "C" void blocc_cpu_fault(blocc::runtime::cpu::ProgramState *state,
                                int32_t site, int64_t lane) {
  using namespace blocc::cpu;
  try {
    const FaultSite &f = info_of(state).faults.at(site);
    std::string text = program_str(state) + ", " + f.op + ": ";
    switch (f.form) {
    case FaultSite::Form::LaneFirst:
      text += describe_lane(lane, f.shape) + ": " + f.message;
      break;
    case FaultSite::Form::NoLane:
      text += f.message;
      break;
    case FaultSite::Form::FalseLane:
      text += f.message + " (" + describe_lane(lane, f.shape) + " is false)";
      break;
    }
    state->error = text;
  } catch (...) {
    state->error = "blocc: internal error while reporting a kernel fault";
  }
}

extern "C" void blocc_cpu_print(blocc::runtime::cpu::ProgramState *state,
                                int32_t site, const void *const *operands) {
  using namespace blocc::cpu;
  static std::mutex output;
  try {
    const PrintSite &p = info_of(state).prints.at(site);
    std::string pid = "pid (" + std::to_string(state->program[0]) + ", " +
                      std::to_string(state->program[1]) + ", " +
                      std::to_string(state->program[2]) + ")";
    std::string text;
    if (p.elements.empty())
      text = pid + " " + p.prefix + "\n";
    for (size_t k = 0; k < p.elements.size(); ++k) {
      std::string label = p.prefix;
      if (p.elements.size() > 1)
        label += " (operand " + std::to_string(k) + ")";
      const std::vector<int64_t> &shape = p.shapes[k];
      int64_t count = 1;
      for (int64_t d : shape)
        count *= d;
      int bits = p.elements[k] == blocc::ir::Scalar::Ptr
                     ? 64
                     : blocc::ir::scalar_bits(p.elements[k]);
      int bytes = bits < 8 ? 1 : bits / 8;
      auto *data = static_cast<const unsigned char *>(operands[k]);
      for (int64_t i = 0; i < count; ++i) {
        // "idx (i, j)": the index in the operand's shape ("()" for scalars).
        std::string index = "(";
        int64_t rest = i;
        std::vector<int64_t> coordinates(shape.size());
        for (size_t d = shape.size(); d-- > 0;) {
          coordinates[d] = rest % shape[d];
          rest /= shape[d];
        }
        for (size_t d = 0; d < coordinates.size(); ++d)
          index += (d ? ", " : "") + std::to_string(coordinates[d]);
        index += ")";
        text += pid + " idx " + index + " " + label + " " +
                format_element(data + i * bytes, p.elements[k], p.hex) + "\n";
      }
    }
    std::lock_guard<std::mutex> lock(output);
    std::cout << text << std::flush;
  } catch (...) {
  }
}
