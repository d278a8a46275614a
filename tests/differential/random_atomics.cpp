// Atomics with contention: integer values of the main shape combined into a
// few slots of an output buffer that every lane of every program shares,
// as a histogram or a global sum does. Add, max, min, and, or and xor of
// integers give the same final slots in any order, so executors that
// interleave the programs differently must agree; the value each atomic
// returns depends on that order and is never used. The slots start as the
// output poison, which every executor sees the same.
#include "generator_internal.h"

namespace blocc::differential::detail {

bool KernelGenerator::atomic_action() {
  static const std::vector<Scalar> dtypes = {Scalar::I32, Scalar::I32,
                                             Scalar::U32, Scalar::I64};
  static const std::vector<std::string> kinds = {"add", "add", "max", "min",
                                                 "and", "or",  "xor"};
  Shape shape = layout_.main_shape();
  Scalar d = rng_.pick(dtypes);
  Value *v = operand(d, shape, Need::Any);
  if (!v)
    return false;
  // Slot of each lane: its offset modulo a few slots (offsets are >= 0).
  static const std::vector<int64_t> slot_counts = {1, 2, 3, 5, 7};
  int64_t slots = rng_.pick(slot_counts);
  Value *slot =
      make(OpCode::Rem, {offsets_, constant(index_type_, shape, double(slots))},
           offsets_->type());
  // Lanes take part where in bounds and, sometimes, where a condition of
  // their values holds: masks from two sources.
  Value *mask = mask_;
  if (rng_.percent(40)) {
    Value *condition = operand(Scalar::I1, shape, Need::Any);
    Value *both = condition ? make(OpCode::And, {mask, condition}, mask->type())
                            : nullptr;
    if (both)
      mask = both;
  }
  if (!slot || !mask)
    return false;
  BufferSpec spec;
  spec.dtype = d;
  spec.is_output = true;
  spec.elements = slots;
  spec.values = ValueFacts::range(integer_min(d), integer_max(d));
  spec.fully_written = false; // a slot no lane names keeps its poison
  Value *base = buffer_argument("out", spec);
  Type pointers = Type::block(Type::pointer(d), shape);
  Value *addresses = make(
      OpCode::AddPtr, {make(OpCode::Splat, {base}, pointers), slot}, pointers);
  if (!addresses)
    return false;
  ir::Attributes attributes = {
      {"kind", rng_.pick(kinds)},
      {"sem", std::string(rng_.percent(50) ? "relaxed" : "acq_rel")},
      {"scope", std::string("gpu")}};
  return make(OpCode::AtomicRmw, {addresses, v, mask}, type_of(d, shape),
              attributes) != nullptr;
}

} // namespace blocc::differential::detail
