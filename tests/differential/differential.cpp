#include "differential.h"

#include "host_element.h"
#include "ir/printer.h"
#include "kernel_memory.h"

#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace blocc::differential {

namespace {

std::string element_text(ir::Scalar s, const unsigned char *p) {
  std::ostringstream out;
  out << std::setprecision(17) << read_value(s, p) << " [0x" << std::hex
      << read_bits(s, p) << "]";
  return out.str();
}

std::string describe_buffer(const GeneratedKernel &kernel, size_t argument) {
  const ArgumentSpec &a = kernel.arguments[argument];
  return "buffer '" + a.name + "' (argument " + std::to_string(argument) +
         ", " + std::string(ir::scalar_name(a.buffer.dtype)) + ", " +
         std::to_string(a.buffer.elements) + " elements)";
}

/// Runs one executor; "" or what it threw.
std::string run(const Executor &executor, const GeneratedKernel &kernel,
                KernelMemory &memory) {
  std::vector<KernelArg> args = memory.arguments();
  try {
    executor(*kernel.function, kernel.grid, args);
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

/// Why element `e` of output `argument` differs between the runs, or "".
std::string compare_element(const GeneratedKernel &kernel, size_t argument,
                            int64_t e, const unsigned char *a,
                            const unsigned char *b,
                            const CompareOptions &options) {
  const BufferSpec &spec = kernel.arguments[argument].buffer;
  ir::Scalar s = spec.dtype;
  if (std::memcmp(a, b, static_cast<size_t>(element_bytes(s))) == 0)
    return "";
  std::string values = options.name_a + " = " + element_text(s, a) + ", " +
                       options.name_b + " = " + element_text(s, b);
  std::string where = describe_buffer(kernel, argument) + ", element " +
                      std::to_string(e) + ": ";
  if (is_poison(s, a) != is_poison(s, b))
    return where + "written by only one executor (" + values + ")";
  if (is_nan(s, a) && is_nan(s, b))
    return "";
  if (options.comparison == Comparison::Bitwise || !ir::is_float(s))
    return where + values;
  double x = read_value(s, a), y = read_value(s, b);
  double allowed = float_tolerance(s, spec.values, x);
  if (std::fabs(x - y) <= allowed)
    return "";
  std::ostringstream out;
  out << where << values << "; allowed difference " << allowed
      << " (the value is " << spec.values.str() << ")";
  return out.str();
}

/// Why an element written by run a lies outside what the generator
/// derived, or "".
std::string check_range(const GeneratedKernel &kernel, size_t argument,
                        int64_t e, const unsigned char *p) {
  const BufferSpec &spec = kernel.arguments[argument].buffer;
  ir::Scalar s = spec.dtype;
  // The poison pattern is a plausible value of narrow types, not of 32-
  // and 64-bit ones: there it means the element was never written.
  if (is_poison(s, p) && spec.fully_written && element_bytes(s) >= 4)
    return describe_buffer(kernel, argument) + ", element " +
           std::to_string(e) +
           ": never written, though the kernel writes every element";
  if (is_poison(s, p))
    return "";
  double v = read_value(s, p);
  const ValueFacts &f = spec.values;
  if (f.special && !std::isfinite(v))
    return "";
  // Half an ulp of slack for the store's rounding into the buffer, and
  // for integers beyond 2^53 that doubles round.
  double slack = ir::is_float(s) ? float_limits(s).unit_roundoff * std::fabs(v)
                                 : std::ldexp(std::fabs(v), -50);
  if (!std::isnan(v) && v >= f.lo - f.error - slack &&
      v <= f.hi + f.error + slack)
    return "";
  return describe_buffer(kernel, argument) + ", element " + std::to_string(e) +
         ": " + element_text(s, p) + " is outside " + f.str() +
         ", the range the generator derived";
}

} // namespace

double float_tolerance(ir::Scalar s, const ValueFacts &facts,
                       double reference) {
  if (facts.exact())
    return 0;
  const FloatLimits &l = float_limits(s);
  return 2 * facts.error + 4 * l.unit_roundoff * std::fabs(reference) +
         4 * l.smallest_subnormal;
}

DifferentialResult compare_runs(const GeneratedKernel &kernel,
                                const Executor &run_a, const Executor &run_b,
                                const CompareOptions &options) {
  uint64_t input_seed = options.input_seed.value_or(kernel.seed);
  KernelMemory pristine(kernel);
  pristine.fill(input_seed);
  KernelMemory a(pristine), b(pristine);

  std::string problem;
  std::string thrown_a = run(run_a, kernel, a);
  std::string thrown_b = run(run_b, kernel, b);
  if (!thrown_a.empty())
    problem = options.name_a + " failed: " + thrown_a;
  else if (!thrown_b.empty())
    problem = options.name_b + " failed: " + thrown_b;

  for (size_t i = 0; i < kernel.arguments.size() && problem.empty(); ++i) {
    const ArgumentSpec &arg = kernel.arguments[i];
    if (arg.kind != ArgumentSpec::Kind::Buffer)
      continue;
    const BufferSpec &spec = arg.buffer;
    int bytes = element_bytes(spec.dtype);
    if (!spec.is_output) {
      for (const auto &[name, memory] :
           {std::pair{&options.name_a, &a}, std::pair{&options.name_b, &b}})
        if (std::memcmp(memory->data(i), pristine.data(i), pristine.bytes(i)) !=
            0)
          problem = *name + " wrote into input " + describe_buffer(kernel, i);
      continue;
    }
    for (int64_t e = 0; e < spec.elements && problem.empty(); ++e) {
      const unsigned char *pa = a.data(i) + e * bytes;
      const unsigned char *pb = b.data(i) + e * bytes;
      problem = compare_element(kernel, i, e, pa, pb, options);
      if (problem.empty() && options.check_ranges)
        problem = check_range(kernel, i, e, pa);
    }
  }
  if (problem.empty())
    return {};
  std::ostringstream report;
  report << "differential mismatch: kernel seed " << kernel.seed
         << ", input seed " << input_seed << ", grid (" << kernel.grid.x << ", "
         << kernel.grid.y << ", " << kernel.grid.z << ")\n"
         << problem << "\narguments:";
  for (const ArgumentSpec &arg : kernel.arguments) {
    report << " " << arg.name;
    if (arg.kind == ArgumentSpec::Kind::Int)
      report << "=" << arg.value;
  }
  report << "\nkernel:\n" << ir::print(*kernel.function);
  return {false, report.str()};
}

} // namespace blocc::differential
