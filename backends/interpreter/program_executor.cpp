#include "backends/interpreter/program_executor.h"

#include "backends/interpreter/collective_ops.h"
#include "backends/interpreter/debug_ops.h"
#include "backends/interpreter/descriptor_ops.h"
#include "backends/interpreter/element.h"
#include "backends/interpreter/elementwise.h"
#include "backends/interpreter/memory.h"
#include "backends/interpreter/memory_ops.h"
#include "backends/interpreter/shape_ops.h"
#include "ir/error.h"

#include <bit>
#include <iostream>

namespace blocc::interp {

using ir::OpCode;
using ir::Scalar;

ProgramExecutor::ProgramExecutor(const ir::Function &kernel,
                                 const Memory &memory, ProgramId program,
                                 Grid grid, const InterpretOptions &options,
                                 WriteRaces *races)
    : kernel_(kernel), memory_(memory), program_(program), grid_(grid),
      options_(options), races_(races) {}

void ProgramExecutor::run(std::vector<RuntimeValue> arguments) {
  run_block(kernel_.body(), std::move(arguments));
}

const RuntimeValue &ProgramExecutor::value_of(const ir::Value *v,
                                              const ir::Operation &user) const {
  auto it = values_.find(v);
  if (it == values_.end())
    site(&user).fail("internal: an operand has no value (used before it is "
                     "defined, or defined in another region)");
  return it->second;
}

void ProgramExecutor::define(const ir::Operation &op,
                             std::vector<RuntimeValue> results) {
  if (results.size() != op.num_results())
    site(&op).fail("internal: produced " + std::to_string(results.size()) +
                   " values for " + std::to_string(op.num_results()) +
                   " results");
  for (size_t i = 0; i < results.size(); ++i)
    values_[op.result(i)] = std::move(results[i]);
}

std::vector<RuntimeValue>
ProgramExecutor::run_block(const ir::Block &block,
                           std::vector<RuntimeValue> arguments) {
  if (arguments.size() != block.num_arguments())
    throw Error(site(block.parent_op()).str() + ": internal: region takes " +
                std::to_string(block.num_arguments()) + " arguments, got " +
                std::to_string(arguments.size()));
  for (size_t i = 0; i < arguments.size(); ++i)
    values_[block.argument(i)] = std::move(arguments[i]);
  for (const auto &owned : block.ops()) {
    const ir::Operation &op = *owned;
    if (ir::is_terminator(op.code())) {
      if (op.code() == OpCode::Return) {
        returned_ = true;
        return {};
      }
      std::vector<RuntimeValue> yielded;
      for (const ir::Value *v : op.operands())
        yielded.push_back(value_of(v, op));
      return yielded;
    }
    run_op(op);
    if (returned_)
      return {};
  }
  return {}; // a block without terminator yields nothing
}

RuntimeValue ProgramExecutor::constant(const ExecutionSite &s) const {
  RuntimeValue r(s.op->result()->type());
  Scalar element = r.element();
  auto it = s.op->attributes().find("value");
  if (it == s.op->attributes().end())
    s.fail("missing attribute 'value'");
  uint64_t bits;
  if (const auto *i = std::get_if<int64_t>(&it->second)) {
    uint64_t as_i64 = static_cast<uint64_t>(*i);
    bits =
        element == Scalar::Ptr ? as_i64 : convert(as_i64, Scalar::I64, element);
  } else if (const auto *d = std::get_if<double>(&it->second)) {
    if (element == Scalar::Ptr)
      s.fail("a pointer constant needs an integer value");
    bits = convert(std::bit_cast<uint64_t>(*d), Scalar::F64, element);
  } else {
    s.fail("attribute 'value' is neither an integer nor a float");
  }
  std::fill(r.bits.begin(), r.bits.end(), bits);
  if (r.is_pointer())
    std::fill(r.provenance.begin(), r.provenance.end(),
              memory_.provenance_of(bits));
  return r;
}

RuntimeValue ProgramExecutor::grid_query(const ExecutionSite &s) const {
  int64_t axis = s.op->int_attr("axis");
  if (axis < 0 || axis > 2)
    s.fail("axis " + std::to_string(axis) + " is not 0, 1 or 2");
  int64_t v = s.op->code() == OpCode::ProgramId
                  ? program_[static_cast<int>(axis)]
                  : grid_[static_cast<int>(axis)];
  RuntimeValue r(s.op->result()->type());
  if (!ir::is_integer(r.element()))
    s.fail("result type " + r.type.str() + " is not an integer");
  std::fill(r.bits.begin(), r.bits.end(),
            canonicalize(static_cast<uint64_t>(v), r.element()));
  return r;
}

RuntimeValue ProgramExecutor::arange(const ExecutionSite &s) const {
  int64_t start = s.op->int_attr("start"), end = s.op->int_attr("end");
  RuntimeValue r(s.op->result()->type());
  if (r.size() != end - start || !ir::is_integer(r.element()))
    s.fail("result type " + r.type.str() + " does not hold [" +
           std::to_string(start) + ", " + std::to_string(end) + ")");
  for (int64_t i = 0; i < r.size(); ++i)
    r.bits[i] = canonicalize(static_cast<uint64_t>(start + i), r.element());
  return r;
}

namespace {

/// A loop bound as an exact integer, whatever its type's signedness.
__int128 bound_value(const RuntimeValue &v) {
  uint64_t bits = v.bits.at(0);
  if (ir::is_signed(v.element()))
    return static_cast<__int128>(as_signed(bits));
  return static_cast<__int128>(bits);
}

std::string int128_str(__int128 v) {
  // Loop counters stay within [-2^63, 2^64 + |step|): print them exactly.
  bool negative = v < 0;
  unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(v)
                                         : static_cast<unsigned __int128>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  return negative ? "-" + digits : digits;
}

} // namespace

void ProgramExecutor::run_for(
    const ExecutionSite &s, const std::vector<const RuntimeValue *> &operands) {
  const ir::Operation &op = *s.op;
  if (operands.size() < 3 || op.num_regions() != 1)
    s.fail("expects (lb, ub, step, init...) and one body region");
  const RuntimeValue &lb = *operands[0], &ub = *operands[1],
                     &step_v = *operands[2];
  for (const RuntimeValue *b : {&lb, &ub, &step_v})
    if (b->size() != 1 || !ir::is_integer(b->element()))
      s.fail("loop bounds must be integer scalars, got " + b->type.str());
  const ir::Block &body = *op.region(0);
  size_t carried = operands.size() - 3;
  if (body.num_arguments() != carried + 1 || op.num_results() != carried)
    s.fail("the body takes (iv, carried...) and the loop returns the carried "
           "values: expected " +
           std::to_string(carried + 1) + " body arguments and " +
           std::to_string(carried) + " results");
  __int128 begin = bound_value(lb), end = bound_value(ub),
           step = bound_value(step_v);
  if (step == 0)
    s.fail("step is 0: the loop would never end");
  std::vector<RuntimeValue> state;
  for (size_t i = 0; i < carried; ++i)
    state.push_back(*operands[3 + i]);
  Scalar iv_type = body.argument(0)->type().element();
  // Counted in 128 bits so that iv + step cannot wrap near the type's
  // maximum; a negative step counts down while iv > ub, as Python's range.
  for (__int128 iv = begin; step > 0 ? iv < end : iv > end; iv += step) {
    RuntimeValue iv_value(body.argument(0)->type());
    iv_value.bits[0] = canonicalize(static_cast<uint64_t>(iv), iv_type);
    std::vector<RuntimeValue> arguments;
    arguments.push_back(std::move(iv_value));
    for (RuntimeValue &v : state)
      arguments.push_back(std::move(v));
    std::vector<RuntimeValue> next = run_block(body, std::move(arguments));
    if (returned_)
      return;
    if (next.size() != carried)
      s.fail("the body yields " + std::to_string(next.size()) + " values for " +
             std::to_string(carried) +
             " carried values (at iv = " + int128_str(iv) + ")");
    state = std::move(next);
  }
  define(op, std::move(state));
}

void ProgramExecutor::run_if(
    const ExecutionSite &s, const std::vector<const RuntimeValue *> &operands) {
  const ir::Operation &op = *s.op;
  if (operands.size() != 1 || operands[0]->size() != 1 ||
      op.num_regions() < 1 || op.num_regions() > 2)
    s.fail("expects one scalar condition and a then (and else) region");
  bool taken = operands[0]->bits[0] != 0;
  std::vector<RuntimeValue> results;
  if (taken)
    results = run_block(*op.region(0), {});
  else if (op.num_regions() == 2)
    results = run_block(*op.region(1), {});
  if (returned_)
    return;
  if (results.size() != op.num_results())
    s.fail(std::string("the ") + (taken ? "then" : "else") + " region yields " +
           std::to_string(results.size()) + " values for " +
           std::to_string(op.num_results()) + " results");
  define(op, std::move(results));
}

void ProgramExecutor::run_op(const ir::Operation &op) {
  ExecutionSite s = site(&op);
  std::vector<const RuntimeValue *> operands;
  operands.reserve(op.num_operands());
  for (const ir::Value *v : op.operands())
    operands.push_back(&value_of(v, op));
  RegionRunner run_region = [this](const ir::Block &block,
                                   std::vector<RuntimeValue> arguments) {
    return run_block(block, std::move(arguments));
  };
  OpCode code = op.code();
  switch (code) {
  case OpCode::Constant:
    return define(op, {constant(s)});
  case OpCode::ProgramId:
  case OpCode::NumPrograms:
    return define(op, {grid_query(s)});
  case OpCode::Arange:
    return define(op, {arange(s)});
  case OpCode::Load:
    return define(op, {eval_load(s, memory_, operands)});
  case OpCode::Store:
    return eval_store(s, memory_, operands, races_);
  case OpCode::DescriptorLoad:
    return define(op, {eval_descriptor_load(s, memory_, operands)});
  case OpCode::DescriptorStore:
    return eval_descriptor_store(s, memory_, operands, races_);
  case OpCode::AtomicRmw:
    return define(op, {eval_atomic_rmw(s, memory_, operands)});
  case OpCode::AtomicCas:
    return define(op, {eval_atomic_cas(s, memory_, operands)});
  case OpCode::Reduce:
    return define(op, eval_reduce(s, operands, run_region));
  case OpCode::Scan:
    return define(op, eval_scan(s, operands, run_region));
  case OpCode::Dot:
    return define(op, {eval_dot(s, operands)});
  case OpCode::MultipleOf:
  case OpCode::MaxContiguous:
  case OpCode::MaxConstancy:
  case OpCode::ConvertLayout: // where its elements live: nothing here
    if (operands.size() != 1)
      s.fail("expects one operand");
    return define(op, {*operands[0]});
  case OpCode::Print:
    return eval_print(s, operands,
                      options_.print_stream ? *options_.print_stream
                                            : std::cout);
  case OpCode::Assert:
    return eval_assert(s, operands);
  case OpCode::For:
    return run_for(s, operands);
  case OpCode::If:
    return run_if(s, operands);
  case OpCode::Yield:
  case OpCode::Return:
    s.fail("internal: a terminator in the middle of a block");
  default:
    break;
  }
  if (code >= OpCode::Splat && code <= OpCode::Cat)
    return define(op, eval_shape_op(s, operands));
  if (ir::is_elementwise(code))
    return define(op, {eval_elementwise(s, memory_, operands)});
  s.fail("internal: the interpreter does not know this op");
}

} // namespace blocc::interp
