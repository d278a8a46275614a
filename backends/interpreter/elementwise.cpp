#include "backends/interpreter/elementwise.h"

#include "backends/interpreter/element.h"
#include "backends/interpreter/element_ops.h"
#include "backends/interpreter/memory.h"
#include "ir/function.h"

namespace blocc::interp {

using ir::OpCode;
using ir::Scalar;

std::string lane_str(int64_t lane, const std::vector<int64_t> &shape) {
  std::string s = "lane " + std::to_string(lane);
  if (shape.size() > 1)
    s += " (index " + index_str(unflatten(lane, shape)) + ")";
  return s;
}

namespace {

uint64_t width_mask(Scalar s) {
  int bits = ir::scalar_bits(s);
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

/// Runs `f(lane)` for every lane, turning a LaneError into a message that
/// names the lane.
template <typename F>
void for_each_lane(const ExecutionSite &site, const RuntimeValue &result, F f) {
  int64_t lane = 0;
  try {
    for (; lane < result.size(); ++lane)
      f(lane);
  } catch (const LaneError &e) {
    site.fail(lane_str(lane, result.type.shape()) + ": " + e.message);
  }
}

void check_operands(const ExecutionSite &site,
                    const std::vector<const RuntimeValue *> &operands,
                    size_t expected, const RuntimeValue &result) {
  if (operands.size() != expected)
    site.fail("expects " + std::to_string(expected) + " operands, got " +
              std::to_string(operands.size()));
  for (const RuntimeValue *v : operands)
    if (v->type.rank() != 0 && v->size() != result.size())
      site.fail("operand of type " + v->type.str() +
                " does not match the result type " + result.type.str());
}

void set_pointer(RuntimeValue &r, int64_t lane, uint64_t address,
                 int32_t provenance) {
  r.bits[lane] = address;
  r.provenance[lane] = provenance;
}

/// cast and bitcast between pointers and integers: the address as a
/// number, and back with the provenance of the buffer it falls in.
bool pointer_conversion(const RuntimeValue &x, RuntimeValue &r, int64_t lane,
                        const Memory &memory) {
  Scalar from = x.element(), to = r.element();
  if (from == Scalar::Ptr && to == Scalar::Ptr) {
    set_pointer(r, lane, x.at(lane), x.provenance_at(lane));
    return true;
  }
  if (from == Scalar::Ptr) {
    r.bits[lane] =
        to == Scalar::I1 ? (x.at(lane) != 0) : canonicalize(x.at(lane), to);
    return true;
  }
  if (to == Scalar::Ptr) {
    if (ir::is_float(from))
      throw LaneError{"cannot convert " + std::string(ir::scalar_name(from)) +
                      " to a pointer"};
    // Canonical integers are already extended by their signedness, as C
    // converts an integer to a 64-bit address.
    uint64_t address = x.at(lane);
    set_pointer(r, lane, address, memory.provenance_of(address));
    return true;
  }
  return false;
}

} // namespace

// Over 100 lines for a reason: one case per elementwise op code, each a
// few lines over the lanes; together they are the oracle's definition of
// those ops, read side by side.
RuntimeValue
eval_elementwise(const ExecutionSite &site, const Memory &memory,
                 const std::vector<const RuntimeValue *> &operands) {
  const ir::Operation &op = *site.op;
  if (op.num_results() != 1)
    site.fail("expects one result");
  RuntimeValue r(op.result()->type());
  const Scalar element = r.element();
  switch (op.code()) {
  case OpCode::Cast: {
    check_operands(site, operands, 1, r);
    const RuntimeValue &x = *operands[0];
    for_each_lane(site, r, [&](int64_t i) {
      if (!pointer_conversion(x, r, i, memory))
        r.bits[i] = convert(x.at(i), x.element(), element);
    });
    return r;
  }
  case OpCode::Bitcast: {
    check_operands(site, operands, 1, r);
    const RuntimeValue &x = *operands[0];
    if (ir::scalar_bits(x.element()) != ir::scalar_bits(element))
      site.fail("bitcast from " + x.type.str() + " to " + r.type.str() +
                " changes the element width");
    for_each_lane(site, r, [&](int64_t i) {
      if (!pointer_conversion(x, r, i, memory))
        r.bits[i] = canonicalize(x.at(i) & width_mask(x.element()), element);
    });
    return r;
  }
  case OpCode::PtrToInt:
  case OpCode::IntToPtr: {
    check_operands(site, operands, 1, r);
    const RuntimeValue &x = *operands[0];
    bool to_int = op.code() == OpCode::PtrToInt;
    if (x.is_pointer() != to_int || r.is_pointer() == to_int ||
        !ir::is_integer(to_int ? element : x.element()))
      site.fail("cannot convert " + x.type.str() + " to " + r.type.str());
    for_each_lane(site, r,
                  [&](int64_t i) { pointer_conversion(x, r, i, memory); });
    return r;
  }
  case OpCode::AddPtr: {
    check_operands(site, operands, 2, r);
    const RuntimeValue &p = *operands[0], &offset = *operands[1];
    if (!p.is_pointer() || !r.is_pointer() || !ir::is_integer(offset.element()))
      site.fail("expects a pointer and an integer offset, got " + p.type.str() +
                " and " + offset.type.str());
    uint64_t bytes = static_cast<uint64_t>(storage_bytes(p.type.pointee()));
    for_each_lane(site, r, [&](int64_t i) {
      // Canonical integers are sign- or zero-extended by their type, so
      // the 64-bit product wraps exactly like pointer arithmetic does.
      set_pointer(r, i, p.at(i) + offset.at(i) * bytes, p.provenance_at(i));
    });
    return r;
  }
  case OpCode::Cmp: {
    check_operands(site, operands, 2, r);
    Predicate predicate;
    const std::string &name = op.string_attr("predicate");
    if (!parse_predicate(name, predicate))
      site.fail("unknown predicate '" + name +
                "' (expected eq, ne, lt, le, gt or ge)");
    const RuntimeValue &a = *operands[0], &b = *operands[1];
    for_each_lane(site, r, [&](int64_t i) {
      r.bits[i] = compare_element(predicate, a.element(), a.at(i), b.at(i));
    });
    return r;
  }
  case OpCode::Select: {
    check_operands(site, operands, 3, r);
    const RuntimeValue &c = *operands[0], &a = *operands[1], &b = *operands[2];
    for_each_lane(site, r, [&](int64_t i) {
      const RuntimeValue &chosen = c.at(i) != 0 ? a : b;
      r.bits[i] = chosen.at(i);
      if (r.is_pointer())
        r.provenance[i] = chosen.provenance_at(i);
    });
    return r;
  }
  case OpCode::Fma: {
    check_operands(site, operands, 3, r);
    const RuntimeValue &a = *operands[0], &b = *operands[1], &c = *operands[2];
    for_each_lane(site, r, [&](int64_t i) {
      r.bits[i] = fma_element(element, a.at(i), b.at(i), c.at(i));
    });
    return r;
  }
  case OpCode::Neg:
  case OpCode::Not:
  case OpCode::Abs: {
    check_operands(site, operands, 1, r);
    const RuntimeValue &a = *operands[0];
    for_each_lane(site, r, [&](int64_t i) {
      r.bits[i] = unary_element(op.code(), element, a.at(i));
    });
    return r;
  }
  default:
    break;
  }
  if (ir::is_unary_math(op.code())) {
    check_operands(site, operands, 1, r);
    const RuntimeValue &a = *operands[0];
    const bool flush = ir::flushes_subnormals(op);
    for_each_lane(site, r, [&](int64_t i) {
      r.bits[i] = unary_element(op.code(), element, a.at(i));
      if (flush)
        r.bits[i] = flush_subnormal_f32(r.bits[i]);
    });
    return r;
  }
  if (op.code() >= OpCode::Add && op.code() <= OpCode::Umulhi) {
    check_operands(site, operands, 2, r);
    const RuntimeValue &a = *operands[0], &b = *operands[1];
    if (a.element() != element || b.element() != element)
      site.fail("operands " + a.type.str() + " and " + b.type.str() +
                " do not have the result's element type " + r.type.str());
    for_each_lane(site, r, [&](int64_t i) {
      r.bits[i] = binary_element(op.code(), element, a.at(i), b.at(i));
    });
    return r;
  }
  site.fail("internal: not an elementwise op");
}

} // namespace blocc::interp
