#include "runtime/cpu/program_sites.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>

namespace blocc::runtime::cpu {

namespace {

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
  return describe_program(sites_of(state).name, state->program);
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

} // namespace blocc::runtime::cpu

extern "C" void blocc_cpu_fault(blocc::runtime::cpu::ProgramState *state,
                                int32_t site, int64_t lane) {
  using namespace blocc::runtime::cpu;
  try {
    const ProgramSites &sites = sites_of(state);
    state->error = blocc::runtime::describe_fault(
        sites.name, sites.faults.at(site), state->program, lane);
  } catch (...) {
    state->error = "blocc: internal error while reporting a kernel fault";
  }
}

extern "C" void blocc_cpu_print(blocc::runtime::cpu::ProgramState *state,
                                int32_t site, const void *const *operands) {
  using namespace blocc::runtime::cpu;
  static std::mutex output;
  try {
    const PrintSite &p = sites_of(state).prints.at(site);
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
