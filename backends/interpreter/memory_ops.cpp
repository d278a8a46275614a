#include "backends/interpreter/memory_ops.h"

#include "backends/interpreter/element.h"
#include "backends/interpreter/element_ops.h"
#include "backends/interpreter/elementwise.h"
#include "backends/interpreter/memory.h"
#include "backends/interpreter/write_races.h"
#include "ir/function.h"
#include "ir/opcode.h"

#include <optional>

namespace blocc::interp {

using ir::OpCode;
using ir::Scalar;

namespace {

/// What every memory op shares: the pointer block, its pointee, which
/// lanes are active.
struct Access {
  const RuntimeValue *pointer = nullptr;
  const RuntimeValue *mask = nullptr; // nullptr: every lane active
  Scalar pointee = Scalar::I8;
  int bytes = 1;
  std::vector<int64_t> shape;
  int64_t lanes = 1;

  bool active(int64_t lane) const { return !mask || mask->at(lane) != 0; }
};

void expect_operands(const ExecutionSite &site,
                     const std::vector<const RuntimeValue *> &operands,
                     size_t min, size_t max) {
  if (operands.size() < min || operands.size() > max)
    site.fail("expects " + std::to_string(min) +
              (min == max ? "" : " to " + std::to_string(max)) +
              " operands, got " + std::to_string(operands.size()));
}

Access make_access(const ExecutionSite &site, const RuntimeValue &pointer,
                   const RuntimeValue *mask,
                   const std::vector<const RuntimeValue *> &values) {
  if (!pointer.is_pointer())
    site.fail("expects a pointer operand, got " + pointer.type.str());
  Access a;
  a.pointer = &pointer;
  a.mask = mask;
  a.pointee = pointer.type.pointee();
  if (a.pointee == Scalar::Ptr)
    site.fail("loading and storing pointers is not supported");
  a.bytes = storage_bytes(a.pointee);
  a.shape = pointer.type.shape();
  a.lanes = pointer.size();
  if (mask && (mask->element() != Scalar::I1 ||
               (mask->type.rank() != 0 && mask->size() != a.lanes)))
    site.fail("mask " + mask->type.str() + " does not fit the pointer block " +
              pointer.type.str());
  for (const RuntimeValue *v : values)
    if (v->type.rank() != 0 && v->size() != a.lanes)
      site.fail("operand " + v->type.str() +
                " does not fit the pointer block " + pointer.type.str());
  return a;
}

void check_all(const ExecutionSite &site, const Memory &memory, const Access &a,
               AccessKind kind) {
  for (int64_t lane = 0; lane < a.lanes; ++lane)
    if (a.active(lane))
      memory.check(site, kind, lane, a.shape, a.pointer->at(lane),
                   a.pointer->provenance_at(lane), a.bytes);
}

uint64_t read_element(const Access &a, int64_t lane) {
  uint64_t raw = Memory::read(a.pointer->at(lane), a.bytes);
  // A bool in memory is a byte; any nonzero byte reads as true.
  return a.pointee == Scalar::I1 ? raw != 0 : canonicalize(raw, a.pointee);
}

void write_element(const Access &a, int64_t lane, uint64_t value) {
  Memory::write(a.pointer->at(lane), a.bytes, value);
}

void expect_element(const ExecutionSite &site, const RuntimeValue &v,
                    const Access &a, const char *what) {
  if (v.element() != a.pointee)
    site.fail(std::string(what) + " " + v.type.str() +
              " does not have the pointee type " +
              std::string(ir::scalar_name(a.pointee)));
}

} // namespace

RuntimeValue eval_load(const ExecutionSite &site, const Memory &memory,
                       const std::vector<const RuntimeValue *> &operands) {
  expect_operands(site, operands, 1, 3);
  const RuntimeValue *mask = operands.size() > 1 ? operands[1] : nullptr;
  const RuntimeValue *other = operands.size() > 2 ? operands[2] : nullptr;
  std::vector<const RuntimeValue *> values;
  if (other)
    values.push_back(other);
  Access a = make_access(site, *operands[0], mask, values);
  if (other)
    expect_element(site, *other, a, "other");
  RuntimeValue r(site.op->result()->type());
  if (r.size() != a.lanes || r.element() != a.pointee)
    site.fail("result " + r.type.str() + " does not match the pointer block " +
              operands[0]->type.str());
  check_all(site, memory, a, AccessKind::Load);
  for (int64_t lane = 0; lane < a.lanes; ++lane)
    r.bits[lane] = a.active(lane) ? read_element(a, lane)
                   : other        ? other->at(lane)
                                  : 0;
  return r;
}

void eval_store(const ExecutionSite &site, const Memory &memory,
                const std::vector<const RuntimeValue *> &operands,
                WriteRaces *races) {
  expect_operands(site, operands, 2, 3);
  const RuntimeValue &value = *operands[1];
  const RuntimeValue *mask = operands.size() > 2 ? operands[2] : nullptr;
  Access a = make_access(site, *operands[0], mask, {&value});
  expect_element(site, value, a, "value");
  check_all(site, memory, a, AccessKind::Store); // before any write
  for (int64_t lane = 0; lane < a.lanes; ++lane)
    if (a.active(lane)) {
      if (races)
        races->record(site, memory, lane, a.pointer->at(lane), a.bytes,
                      a.pointee, value.at(lane));
      write_element(a, lane, value.at(lane));
    }
}

RuntimeValue
eval_atomic_rmw(const ExecutionSite &site, const Memory &memory,
                const std::vector<const RuntimeValue *> &operands) {
  expect_operands(site, operands, 2, 3);
  const RuntimeValue &value = *operands[1];
  const RuntimeValue *mask = operands.size() > 2 ? operands[2] : nullptr;
  Access a = make_access(site, *operands[0], mask, {&value});
  expect_element(site, value, a, "value");
  const std::string &kind = site.op->string_attr("kind");
  const bool exchange = kind == "xchg";
  std::optional<OpCode> combined = ir::atomic_combine(kind);
  if (!combined && !exchange)
    site.fail("unknown atomic kind '" + kind +
              "' (expected add, max, min, and, or, xor or xchg)");
  const OpCode combine = combined.value_or(OpCode::Add);
  if (!exchange && ir::is_float(a.pointee) &&
      (combine == OpCode::And || combine == OpCode::Or ||
       combine == OpCode::Xor))
    site.fail("atomic " + kind + " is not defined on " +
              std::string(ir::scalar_name(a.pointee)) + " elements");
  RuntimeValue r(site.op->result()->type());
  if (r.size() != a.lanes || r.element() != a.pointee)
    site.fail("result " + r.type.str() + " does not match the pointer block " +
              operands[0]->type.str());
  check_all(site, memory, a, AccessKind::Atomic);
  int64_t lane = 0;
  try {
    for (; lane < a.lanes; ++lane) {
      if (!a.active(lane))
        continue;
      uint64_t old = read_element(a, lane);
      uint64_t updated =
          exchange ? value.at(lane)
                   : binary_element(combine, a.pointee, old, value.at(lane));
      write_element(a, lane, updated);
      r.bits[lane] = old;
    }
  } catch (const LaneError &e) {
    site.fail(lane_str(lane, a.shape) + ": " + e.message);
  }
  return r;
}

RuntimeValue
eval_atomic_cas(const ExecutionSite &site, const Memory &memory,
                const std::vector<const RuntimeValue *> &operands) {
  expect_operands(site, operands, 3, 3);
  const RuntimeValue &compare = *operands[1], &value = *operands[2];
  Access a = make_access(site, *operands[0], nullptr, {&compare, &value});
  expect_element(site, compare, a, "compare");
  expect_element(site, value, a, "value");
  RuntimeValue r(site.op->result()->type());
  if (r.size() != a.lanes || r.element() != a.pointee)
    site.fail("result " + r.type.str() + " does not match the pointer block " +
              operands[0]->type.str());
  check_all(site, memory, a, AccessKind::Atomic);
  for (int64_t lane = 0; lane < a.lanes; ++lane) {
    uint64_t old = read_element(a, lane);
    if (old == compare.at(lane))
      write_element(a, lane, value.at(lane));
    r.bits[lane] = old;
  }
  return r;
}

} // namespace blocc::interp
