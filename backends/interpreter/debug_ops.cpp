#include "backends/interpreter/debug_ops.h"

#include "backends/interpreter/element.h"
#include "backends/interpreter/elementwise.h"
#include "ir/function.h"

#include <charconv>
#include <cstdio>
#include <ostream>

namespace blocc::interp {

using ir::Scalar;

std::string format_element(uint64_t bits, Scalar s, bool hex) {
  if (hex || s == Scalar::Ptr) {
    int bits_wide = ir::scalar_bits(s);
    int digits = bits_wide < 4 ? 1 : bits_wide / 4;
    uint64_t raw =
        bits_wide >= 64 ? bits : bits & ((uint64_t{1} << bits_wide) - 1);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "0x%0*llx", digits,
                  static_cast<unsigned long long>(raw));
    return buffer;
  }
  if (ir::is_signed(s))
    return std::to_string(as_signed(bits));
  if (ir::is_integer(s))
    return std::to_string(bits);
  char buffer[64];
  std::to_chars_result end;
  if (s == Scalar::F64)
    end = std::to_chars(buffer, buffer + sizeof buffer, to_double(bits, s));
  else // every narrower float is exactly a float
    end = std::to_chars(buffer, buffer + sizeof buffer,
                        static_cast<float>(to_double(bits, s)));
  return std::string(buffer, end.ptr);
}

void eval_print(const ExecutionSite &site,
                const std::vector<const RuntimeValue *> &operands,
                std::ostream &out) {
  const ir::Operation &op = *site.op;
  std::string prefix = op.string_attr_or("prefix", "");
  bool hex = op.has_attr("hex") && op.int_attr("hex") != 0;
  std::string pid = "pid " + site.program.str();
  if (operands.empty()) {
    out << pid << " " << prefix << "\n";
    return;
  }
  for (size_t k = 0; k < operands.size(); ++k) {
    const RuntimeValue &v = *operands[k];
    std::string label = prefix;
    if (operands.size() > 1)
      label += " (operand " + std::to_string(k) + ")";
    std::vector<int64_t> shape = v.type.shape();
    for (int64_t i = 0; i < v.size(); ++i)
      out << pid << " idx " << index_str(unflatten(i, shape)) << " " << label
          << " " << format_element(v.bits[i], v.element(), hex) << "\n";
  }
  out.flush();
}

void eval_assert(const ExecutionSite &site,
                 const std::vector<const RuntimeValue *> &operands) {
  if (operands.size() != 1)
    site.fail("expects one condition operand, got " +
              std::to_string(operands.size()));
  const RuntimeValue &cond = *operands[0];
  for (int64_t i = 0; i < cond.size(); ++i)
    if (cond.bits[i] == 0)
      site.fail("assertion failed: " + site.op->string_attr_or("message", "") +
                " (" + lane_str(i, cond.type.shape()) + " is false)");
}

} // namespace blocc::interp
