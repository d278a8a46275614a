#include "float64_reference.h"

#include "executors.h"
#include "host_element.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"

#include <cmath>
#include <sstream>

namespace blocc::differential {

namespace {

using ir::Scalar;
using ir::Type;

bool is_narrow_float(Scalar s) {
  return s == Scalar::F16 || s == Scalar::BF16 || s == Scalar::F32;
}

Type widen(const Type &t) {
  Type element = t.element_type();
  if (t.is_pointer() && is_narrow_float(t.pointee()))
    element = Type::pointer(Scalar::F64, t.address_space());
  else if (!t.is_pointer() && is_narrow_float(t.element()))
    element = Type::scalar(Scalar::F64);
  return Type::block(element, t.shape());
}

void widen_block(ir::Block &block) {
  for (ir::Value *arg : block.arguments())
    arg->set_type(widen(arg->type()));
  for (auto &op : block.ops()) {
    for (ir::Value *r : op->results())
      r->set_type(widen(r->type()));
    for (size_t i = 0; i < op->num_regions(); ++i)
      widen_block(*op->region(i));
  }
}

/// The kernel with wide floats, or nothing when it does not verify (a
/// bitcast of a float to an integer of its width has no wide form).
std::optional<GeneratedKernel> wide_twin(const GeneratedKernel &kernel) {
  GeneratedKernel wide;
  wide.seed = kernel.seed;
  wide.grid = kernel.grid;
  wide.arguments = kernel.arguments;
  for (ArgumentSpec &a : wide.arguments)
    if (a.kind == ArgumentSpec::Kind::Buffer && is_narrow_float(a.buffer.dtype))
      a.buffer.dtype = Scalar::F64;
  wide.function = ir::parse_function(ir::print(*kernel.function));
  widen_block(wide.function->body());
  try {
    ir::verify(*wide.function);
  } catch (const std::exception &) {
    return std::nullopt;
  }
  return wide;
}

std::string number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

} // namespace

std::string check_against_float64(const GeneratedKernel &kernel,
                                  const Executor &run, uint64_t input_seed) {
  std::optional<GeneratedKernel> wide = wide_twin(kernel);
  if (!wide)
    return "";
  KernelMemory narrow_memory(kernel), wide_memory(*wide);
  narrow_memory.fill(input_seed);
  wide_memory.fill(input_seed);
  std::vector<KernelArg> narrow_args = narrow_memory.arguments();
  std::vector<KernelArg> wide_args = wide_memory.arguments();
  std::string problem;
  try {
    run(*kernel.function, kernel.grid, narrow_args);
    interpreter_executor()(*wide->function, wide->grid, wide_args);
  } catch (const std::exception &e) {
    problem = std::string("a run failed: ") + e.what();
  }
  for (size_t i = 0; i < kernel.arguments.size() && problem.empty(); ++i) {
    const ArgumentSpec &a = kernel.arguments[i];
    if (a.kind != ArgumentSpec::Kind::Buffer || !a.buffer.is_output)
      continue;
    Scalar s = a.buffer.dtype, ws = wide->arguments[i].buffer.dtype;
    const ValueFacts &f = a.buffer.values;
    for (int64_t e = 0; e < a.buffer.elements && problem.empty(); ++e) {
      const unsigned char *p = narrow_memory.data(i) + e * element_bytes(s);
      const unsigned char *q = wide_memory.data(i) + e * element_bytes(ws);
      std::string where = "buffer '" + a.name + "' (" +
                          std::string(ir::scalar_name(s)) + "), element " +
                          std::to_string(e) + ": ";
      // The poison pattern is also a value of types narrower than 32 bits
      // (0xABAB is -0.0597 in f16): where the reference wrote the element,
      // such a narrow one is checked as a value, which still catches a
      // skipped store.
      bool wide_written = !is_poison(ws, q);
      bool narrow_written =
          !is_poison(s, p) || (wide_written && element_bytes(s) < 4);
      if (narrow_written != wide_written) {
        problem = where + "written in only one of the two runs";
        continue;
      }
      if (!wide_written)
        continue;
      double v = read_value(s, p), reference = read_value(ws, q);
      // The reference's own rounding: f64 errors, far below any f32 one.
      double slack = 0x1p-40 * std::max(1.0, std::fabs(reference));
      bool ok;
      if (!ir::is_float(s))
        ok = read_bits(s, p) == read_bits(ws, q);
      else if (std::isnan(v) || std::isnan(reference))
        ok = std::isnan(v) && std::isnan(reference);
      else if (std::isinf(v) || std::isinf(reference))
        ok = v == reference;
      else
        ok = std::fabs(v - reference) <= f.error + (f.exact() ? 0 : slack);
      if (!ok)
        problem = where + number(v) + " but the float64 reference is " +
                  number(reference) + "; the generator claims " + f.str();
    }
  }
  if (problem.empty())
    return "";
  return "kernel seed " + std::to_string(kernel.seed) + ", input seed " +
         std::to_string(input_seed) +
         ": the generator's error bounds do not hold\n" + problem +
         "\nkernel:\n" + ir::print(*kernel.function) + "float64 twin:\n" +
         ir::print(*wide->function);
}

} // namespace blocc::differential
