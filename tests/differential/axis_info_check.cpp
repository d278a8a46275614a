#include "axis_info_check.h"

#include "backends/interpreter/interpreter.h"
#include "ir/axis_info.h"
#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "kernel_memory.h"

#include <map>
#include <set>
#include <sstream>

namespace blocc::differential {

namespace {

/// The values whose facts a backend relies on: addptr offsets and results,
/// and the pointers and masks of loads and stores.
std::vector<ir::Value *> checked_values(ir::Function &f) {
  std::vector<ir::Value *> values;
  std::set<ir::Value *> seen;
  auto add = [&](ir::Value *v) {
    if (seen.insert(v).second)
      values.push_back(v);
  };
  f.walk([&](ir::Operation &op) {
    switch (op.code()) {
    case ir::OpCode::AddPtr:
      add(op.operand(1));
      add(op.result());
      break;
    case ir::OpCode::Load:
      add(op.operand(0));
      if (op.num_operands() > 1)
        add(op.operand(1));
      break;
    case ir::OpCode::Store:
      add(op.operand(0));
      if (op.num_operands() > 2)
        add(op.operand(2));
      break;
    default:
      break;
    }
  });
  return values;
}

/// Prints `v` (hex, prefix "vK") where it is defined: after its op, or at
/// the start of the block whose argument it is.
void print_after_definition(ir::Value *v, size_t k) {
  ir::Block *block = v->owner_block();
  ir::Block::iterator at = block->ops().begin();
  if (ir::Operation *def = v->defining_op())
    at = std::next(block->find(def));
  ir::Builder b;
  b.restore(block, at);
  b.create(ir::OpCode::Print, {v}, {},
           {{"prefix", "v" + std::to_string(k)}, {"hex", int64_t{1}}});
}

/// An element as the analysis normalizes it: sign-extended for signed
/// types, addresses and unsigned values as they are.
int64_t element_value(const ir::Type &t, uint64_t raw) {
  if (t.is_pointer() || !ir::is_signed(t.element()))
    return static_cast<int64_t>(raw);
  int shift = 64 - ir::scalar_bits(t.element());
  return static_cast<int64_t>(raw << shift) >> shift;
}

/// The first fact of `info` that `values` (one instance of the value,
/// row-major) break, or "". `step` is 1 for integers and the element size
/// for pointers.
std::string broken_fact(const ir::AxisInfo &info,
                        const std::vector<int64_t> &dims, int64_t step,
                        const std::vector<int64_t> &values) {
  int rank = static_cast<int>(dims.size());
  for (int d = 0; d < rank; ++d) {
    int64_t stride = 1;
    for (int e = d + 1; e < rank; ++e)
      stride *= dims[static_cast<size_t>(e)];
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t p =
          (static_cast<int64_t>(i) / stride) % dims[static_cast<size_t>(d)];
      int64_t v = values[i];
      std::string where = " along dimension " + std::to_string(d) +
                          " at element " + std::to_string(i) + " (value " +
                          std::to_string(v) + ")";
      if (p % info.contiguity[d] != 0 &&
          v != values[i - static_cast<size_t>(stride)] + step)
        return "contiguity" + where;
      if (p % info.constancy[d] != 0 &&
          v != values[i - static_cast<size_t>(stride)])
        return "constancy" + where;
      uint64_t divisor = static_cast<uint64_t>(
          std::min<int64_t>(info.divisibility[d], int64_t{1} << 62));
      if (p % info.contiguity[d] == 0 &&
          (static_cast<uint64_t>(v) & (divisor - 1)) != 0)
        return "divisibility" + where;
      if (info.constant_value && v != *info.constant_value)
        return "constant" + where;
    }
  }
  return "";
}

} // namespace

std::string check_axis_info(const GeneratedKernel &kernel,
                            uint64_t input_seed) {
  std::unique_ptr<ir::Function> f =
      ir::parse_function(ir::print(*kernel.function));
  ir::AxisInfoAnalysis analysis(*f);
  std::vector<ir::Value *> values = checked_values(*f);
  for (size_t k = 0; k < values.size(); ++k)
    print_after_definition(values[k], k);

  KernelMemory memory(kernel);
  memory.fill(input_seed);
  std::vector<KernelArg> args = memory.arguments();
  std::ostringstream out;
  interp::InterpretOptions options;
  options.print_stream = &out;
  try {
    interp::interpret(*f, kernel.grid, args, options);
  } catch (const std::exception &e) {
    return "kernel seed " + std::to_string(kernel.seed) +
           ": the interpreter failed on the kernel with prints: " + e.what();
  }

  // "pid (x, y, z) idx (i, j) vK 0x..." lines, in execution order.
  std::map<size_t, std::vector<int64_t>> printed;
  std::istringstream lines(out.str());
  std::string line;
  while (std::getline(lines, line)) {
    size_t value_at = line.rfind(' ');
    size_t label_at = line.rfind(" v", value_at - 1);
    size_t k = std::stoul(line.substr(label_at + 2, value_at - label_at - 2));
    uint64_t raw = std::stoull(line.substr(value_at + 1), nullptr, 16);
    printed[k].push_back(element_value(values[k]->type(), raw));
  }
  for (size_t k = 0; k < values.size(); ++k) {
    const ir::Type &t = values[k]->type();
    std::vector<int64_t> dims =
        t.is_block() ? t.shape() : std::vector<int64_t>{1};
    size_t numel = static_cast<size_t>(t.num_elements());
    int64_t step =
        t.is_pointer() ? std::max(1, ir::scalar_bits(t.pointee()) / 8) : 1;
    const std::vector<int64_t> &all = printed[k];
    // One group per execution of the print: per program, per iteration.
    for (size_t start = 0; start + numel <= all.size(); start += numel) {
      std::vector<int64_t> one(all.begin() + static_cast<long>(start),
                               all.begin() + static_cast<long>(start + numel));
      std::string broken =
          broken_fact(analysis.get(values[k]), dims, step, one);
      if (broken.empty())
        continue;
      return "kernel seed " + std::to_string(kernel.seed) +
             ": axis info claims " + analysis.get(values[k]).str() + " for v" +
             std::to_string(k) + " (" + t.str() + "), but its " + broken +
             ", in execution " + std::to_string(start / numel) +
             " of the value.\nkernel with the printed values:\n" +
             ir::print(*f) + "axis info:\n" + ir::print_axis_info(*f);
    }
  }
  return "";
}

} // namespace blocc::differential
