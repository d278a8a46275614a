// The verifier: checks that a Function obeys the structural and type rules
// documented next to each opcode in ir/opcode.h. It runs after tracing, after
// parsing and between passes, so a broken invariant is reported where it was
// introduced instead of surfacing as a crash in a backend.
//
// Every message starts with Operation::describe() (the op's name and, when
// known, the user's source line), then says what is wrong and what was
// expected. The first violation throws blocc::Error.
//
// Decisions this file makes where opcode.h is silent:
// - Arithmetic is not defined on pointers (use addptr) nor on the fp8
//   formats (storage only: convert with cast first).
// - An integer `value` attribute may initialize a float constant (it is
//   converted exactly); a float `value` may not initialize an integer one.
//   Integer constants must fit the element's bit width, read either as a
//   signed or an unsigned number (u64 values are stored as their bit pattern).
// - `if` always has two regions (then, else), each ending with a yield, even
//   when it has no results; `for` has one region whose first argument is the
//   induction variable.
// - Reduce and scan combine regions take and yield scalars (one element of
//   each operand), as Triton's combine functions do, and are pure functions
//   of them: no load, store, atomic, print or assert, however deeply
//   nested. Backends run a combine as often and in whatever order their
//   fold needs, so an effect in it would have no defined count or order.
// - Dot takes rank-2 blocks, or rank-3 blocks with a leading batch dimension
//   that all three operands share.
// - descriptor_load and descriptor_store (operand layout in
//   ir/tensor_descriptor.h): the tile (the load's result, the store's value)
//   is a block of the base's pointee, which is a number; the operand count
//   is 1 + 3 * rank for a load, 2 + 3 * rank for a store; the base is a
//   scalar pointer, each extent and stride an i64 scalar, each offset an i32
//   (or i64) scalar. Strides, the last included, may be any value: the frontend
//   requires a last stride of 1 as Triton does, and a lowering to TMA checks
//   what it needs itself.
#include "ir/error.h"
#include "ir/passes.h"
#include "ir/tensor_descriptor.h"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace blocc::ir {

namespace {

std::string shape_str(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string plural(size_t n, const std::string &word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

bool is_computable_float(const Type &t) {
  return t.is_float() && !is_fp8(t.element());
}

class Verifier {
public:
  explicit Verifier(Function &f) : function_(f) {}

  void run() {
    for (size_t i = 0; i < function_.num_arguments(); ++i)
      check_type_shape(nullptr, function_.argument(i)->type(),
                       "argument " + std::to_string(i) + " of function '" +
                           function_.name() + "'");
    verify_block(function_.body(), nullptr);
  }

private:
  // --- reporting -----------------------------------------------------------

  [[noreturn]] void fail(const Operation &op, const std::string &what) const {
    throw Error(op.describe() + ": " + what);
  }

  static std::string operand_str(const Operation &op, size_t i) {
    return "operand " + std::to_string(i) + " (" + op.operand(i)->type().str() +
           ")";
  }

  // --- types ---------------------------------------------------------------

  /// Blocks have rank 1 to 3 and every dimension is a power of two. `op` is
  /// null for function arguments.
  void check_type_shape(const Operation *op, const Type &t,
                        const std::string &what) const {
    auto report = [&](const std::string &msg) {
      if (op)
        fail(*op, what + " " + msg);
      throw Error(what + " " + msg);
    };
    if (!t.is_valid())
      report("has no valid type");
    if (t.rank() > kMaxRank)
      report("has type " + t.str() + " of rank " + std::to_string(t.rank()) +
             "; expected rank at most " + std::to_string(kMaxRank));
    for (int d = 0; d < t.rank(); ++d)
      if (!is_power_of_two(t.dim(d)))
        report("has type " + t.str() + " whose dimension " + std::to_string(d) +
               " is " + std::to_string(t.dim(d)) +
               "; expected every block dimension to be a power of two");
  }

  // --- structure -----------------------------------------------------------

  /// Verifies the block's arguments and ops; `parent` is the op owning the
  /// block as a region, or null for the function body. Values the block
  /// defines are visible to its later ops and to regions nested in them,
  /// and go out of scope when the block ends.
  void verify_block(Block &block, const Operation *parent) {
    std::vector<const Value *> defined;
    auto define = [&](const Value *v) {
      if (visible_.insert(v).second)
        defined.push_back(v);
    };
    for (Value *arg : block.arguments()) {
      if (parent)
        check_type_shape(parent, arg->type(),
                         "region argument " + std::to_string(arg->index()));
      define(arg);
    }

    OpCode expected_end = parent ? OpCode::Yield : OpCode::Return;
    const char *where = parent ? "a region" : "the function body";
    if (block.empty()) {
      if (parent)
        fail(*parent, "has an empty region; expected it to end with yield");
      throw Error("function '" + function_.name() +
                  "' has an empty body; expected it to end with return");
    }
    for (auto &owned : block.ops()) {
      Operation &op = *owned;
      bool last = &op == block.back();
      if (is_terminator(op.code()) && !last)
        fail(op, "is a terminator but is not the last operation of " +
                     std::string(where) +
                     "; expected nothing after it in its block");
      if (is_terminator(op.code()) && op.code() != expected_end)
        fail(op, "cannot end " + std::string(where) + "; expected " +
                     std::string(opcode_name(expected_end)));
      if (last && op.code() != expected_end)
        fail(op, "is the last operation of " + std::string(where) +
                     " but is not a terminator; expected the block to end "
                     "with " +
                     std::string(opcode_name(expected_end)));
      verify_op(op);
      for (Value *r : op.results())
        define(r);
    }
    for (const Value *v : defined)
      visible_.erase(v);
  }

  /// Operands must be defined earlier in the same block or in an enclosing
  /// one (or be arguments of an enclosing block).
  void check_dominance(const Operation &op) const {
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value *v = op.operand(i);
      if (!v)
        fail(op, "operand " + std::to_string(i) + " is null");
      if (visible_.count(v))
        continue;
      std::string which = "operand " + std::to_string(i);
      if (v->is_block_argument())
        fail(op, which + " is an argument of a region that does not enclose "
                         "this use; expected a value defined before the use, "
                         "in its block or an enclosing one");
      Block *home = v->owner_block();
      if (!home)
        fail(op, which + " is the result of " + v->defining_op()->describe() +
                     ", which is no longer part of the function");
      if (op.parent_block() && op.parent_block()->is_nested_in(home))
        fail(op, which + " is used before its definition by " +
                     v->defining_op()->describe() +
                     "; expected every value to be defined before its uses");
      fail(op, which + " is defined by " + v->defining_op()->describe() +
                   " inside a region that does not enclose this use; a value "
                   "defined in a loop body or branch is visible only there "
                   "(yield it to use it outside)");
    }
  }

  void expect_counts(const Operation &op, size_t min_operands,
                     size_t max_operands, size_t results,
                     size_t regions) const {
    size_t n = op.num_operands();
    if (n < min_operands || n > max_operands) {
      std::string expected = min_operands == max_operands
                                 ? std::to_string(min_operands)
                             : max_operands == SIZE_MAX
                                 ? "at least " + std::to_string(min_operands)
                                 : std::to_string(min_operands) + " to " +
                                       std::to_string(max_operands);
      fail(op, "has " + plural(n, "operand") + "; expected " + expected);
    }
    if (op.num_results() != results)
      fail(op, "has " + plural(op.num_results(), "result") + "; expected " +
                   std::to_string(results));
    if (op.num_regions() != regions)
      fail(op, "has " + plural(op.num_regions(), "region") + "; expected " +
                   std::to_string(regions));
  }
  void expect_counts(const Operation &op, size_t operands, size_t results,
                     size_t regions = 0) const {
    expect_counts(op, operands, operands, results, regions);
  }

  void expect_result_type(const Operation &op, const Type &expected,
                          size_t index = 0) const {
    const Type &got = op.result(index)->type();
    if (got != expected)
      fail(op, "result " + std::to_string(index) + " has type " + got.str() +
                   "; expected " + expected.str());
  }

  void expect_same_shape(const Operation &op, size_t i, size_t j) const {
    if (op.operand(i)->type().shape() != op.operand(j)->type().shape())
      fail(op, operand_str(op, j) + " does not have the shape of " +
                   operand_str(op, i) + "; expected equal shapes " +
                   "(broadcast explicitly first)");
  }

  void expect_same_type(const Operation &op, size_t i, size_t j) const {
    if (op.operand(i)->type() != op.operand(j)->type())
      fail(op, operand_str(op, j) + " does not have the type of " +
                   operand_str(op, i) + "; expected equal types");
  }

  void expect_bool_mask(const Operation &op, size_t mask, size_t like,
                        const char *what) const {
    const Type &t = op.operand(mask)->type();
    if (t.element() != Scalar::I1)
      fail(op, std::string(what) + " (" + t.str() +
                   ") is not boolean; expected i1 elements");
    if (t.shape() != op.operand(like)->type().shape())
      fail(op, std::string(what) + " (" + t.str() +
                   ") does not have the pointer's shape " +
                   shape_str(op.operand(like)->type().shape()) +
                   "; expected equal shapes");
  }

  void expect_pointer(const Operation &op, size_t i) const {
    if (!op.operand(i)->type().is_pointer())
      fail(op, operand_str(op, i) + " is not a pointer; expected pointer "
                                    "elements");
  }

  const std::string &expect_string_attr(const Operation &op,
                                        const std::string &name) const {
    auto it = op.attributes().find(name);
    if (it == op.attributes().end() ||
        !std::holds_alternative<std::string>(it->second))
      fail(op, "needs a string attribute '" + name + "'");
    return std::get<std::string>(it->second);
  }
  int64_t expect_int_attr(const Operation &op, const std::string &name) const {
    auto it = op.attributes().find(name);
    if (it == op.attributes().end() ||
        !std::holds_alternative<int64_t>(it->second))
      fail(op, "needs an integer attribute '" + name + "'");
    return std::get<int64_t>(it->second);
  }
  const std::vector<int64_t> &expect_ints_attr(const Operation &op,
                                               const std::string &name) const {
    auto it = op.attributes().find(name);
    if (it == op.attributes().end() ||
        !std::holds_alternative<std::vector<int64_t>>(it->second))
      fail(op, "needs an integer list attribute '" + name + "'");
    return std::get<std::vector<int64_t>>(it->second);
  }
  /// Optional attributes, when present, must have the documented kind.
  template <typename T>
  void expect_optional_attr(const Operation &op, const std::string &name,
                            const char *kind) const {
    auto it = op.attributes().find(name);
    if (it != op.attributes().end() && !std::holds_alternative<T>(it->second))
      fail(op, "attribute '" + name + "' must be " + kind);
  }
  int64_t expect_axis(const Operation &op, int rank_limit) const {
    int64_t axis = expect_int_attr(op, "axis");
    if (axis < 0 || axis >= rank_limit)
      fail(op,
           "axis " + std::to_string(axis) + " is out of range; expected " +
               (rank_limit == 1 ? "0"
                                : "0 to " + std::to_string(rank_limit - 1)));
    return axis;
  }

  /// The yield ending `region` must hand back exactly `types`.
  void expect_yield(const Operation &op, const Block &region,
                    const std::vector<Type> &types, const std::string &what,
                    const std::string &for_what) const {
    const Operation *yield = region.terminator();
    if (yield->num_operands() != types.size())
      fail(op, what + " yields " + plural(yield->num_operands(), "value") +
                   "; expected " + std::to_string(types.size()) + " (" +
                   for_what + ")");
    for (size_t i = 0; i < types.size(); ++i)
      if (yield->operand(i)->type() != types[i])
        fail(op, what + " yields " + yield->operand(i)->type().str() +
                     " as value " + std::to_string(i) + "; expected " +
                     types[i].str() + " (" + for_what + ")");
  }

  // --- operations ----------------------------------------------------------

  void verify_op(Operation &op) {
    check_dominance(op);
    for (size_t i = 0; i < op.num_results(); ++i)
      check_type_shape(&op, op.result(i)->type(),
                       "result " + std::to_string(i));
    switch (op.code()) {
    case OpCode::Constant:
      return verify_constant(op);
    case OpCode::ProgramId:
    case OpCode::NumPrograms:
      expect_counts(op, 0, 1);
      expect_result_type(op, Type::scalar(Scalar::I32));
      expect_axis(op, 3);
      return;
    case OpCode::Arange:
      return verify_arange(op);
    case OpCode::Splat:
      return verify_splat(op);
    case OpCode::Broadcast:
      return verify_broadcast(op);
    case OpCode::ExpandDims:
      return verify_expand_dims(op);
    case OpCode::Reshape:
      return verify_reshape(op);
    case OpCode::Permute:
      return verify_permute(op);
    case OpCode::Join:
      return verify_join(op);
    case OpCode::Split:
      return verify_split(op);
    case OpCode::Cat:
      return verify_cat(op);
    case OpCode::Cast:
    case OpCode::Bitcast:
    case OpCode::PtrToInt:
    case OpCode::IntToPtr:
      return verify_conversion(op);
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul:
    case OpCode::Div:
    case OpCode::Rem:
    case OpCode::Minimum:
    case OpCode::Maximum:
    case OpCode::And:
    case OpCode::Or:
    case OpCode::Xor:
    case OpCode::Shl:
    case OpCode::Shr:
    case OpCode::Umulhi:
    case OpCode::Fma:
      return verify_arithmetic(op);
    case OpCode::Neg:
    case OpCode::Not:
    case OpCode::Abs:
      return verify_arithmetic(op);
    case OpCode::Cmp:
      return verify_cmp(op);
    case OpCode::AddPtr:
      return verify_addptr(op);
    case OpCode::Select:
      return verify_select(op);
    case OpCode::Load:
      return verify_load(op);
    case OpCode::Store:
      return verify_store(op);
    case OpCode::AtomicRmw:
      return verify_atomic_rmw(op);
    case OpCode::AtomicCas:
      return verify_atomic_cas(op);
    case OpCode::DescriptorLoad:
    case OpCode::DescriptorStore:
      return verify_descriptor_access(op);
    case OpCode::Reduce:
    case OpCode::Scan:
      return verify_reduce_or_scan(op);
    case OpCode::Dot:
      return verify_dot(op);
    case OpCode::MultipleOf:
    case OpCode::MaxContiguous:
    case OpCode::MaxConstancy:
      return verify_hint(op);
    case OpCode::ConvertLayout:
      expect_counts(op, 1, 1);
      if (!op.operand(0)->type().is_block())
        fail(op, "operand " + operand_str(op, 0) + " is not a block");
      return expect_result_type(op, op.operand(0)->type());
    case OpCode::Print:
      expect_counts(op, 0, SIZE_MAX, 0, 0);
      expect_optional_attr<std::string>(op, "prefix", "a string");
      expect_optional_attr<int64_t>(op, "hex", "an integer");
      return;
    case OpCode::Assert:
      expect_counts(op, 1, 0);
      if (op.operand(0)->type().element() != Scalar::I1)
        fail(op, "condition " + operand_str(op, 0) +
                     " is not boolean; expected i1 elements");
      expect_optional_attr<std::string>(op, "message", "a string");
      return;
    case OpCode::For:
      return verify_for(op);
    case OpCode::If:
      return verify_if(op);
    case OpCode::Yield:
      expect_counts(op, 0, SIZE_MAX, 0, 0);
      return; // its operands are checked by the op owning the region
    case OpCode::Return:
      expect_counts(op, 0, 0);
      return;
    default:
      if (is_unary_math(op.code()))
        return verify_arithmetic(op);
      fail(op, "has an opcode the verifier does not know");
    }
  }

  void verify_constant(const Operation &op) const {
    expect_counts(op, 0, 1);
    const Type &t = op.result()->type();
    auto it = op.attributes().find("value");
    if (it == op.attributes().end())
      fail(op, "needs a 'value' attribute (an integer or a float)");
    if (t.is_pointer())
      fail(op, "has pointer type " + t.str() +
                   "; expected a number (build pointers with int_to_ptr)");
    if (std::holds_alternative<double>(it->second)) {
      if (!t.is_float())
        fail(op, "has a float value but integer type " + t.str() +
                     "; expected a float element type, or an integer value");
      return;
    }
    if (!std::holds_alternative<int64_t>(it->second))
      fail(op, "has a 'value' attribute that is neither an integer nor a "
               "float");
    if (t.is_integer()) {
      int bits = scalar_bits(t.element());
      int64_t v = std::get<int64_t>(it->second);
      if (bits < 64) {
        int64_t lo = -(int64_t{1} << (bits - 1));
        int64_t hi = (int64_t{1} << bits) - 1;
        if (bits == 1)
          lo = -1;
        if (v < lo || v > hi)
          fail(op, "value " + std::to_string(v) + " does not fit " +
                       t.element_type().str() + "; expected " +
                       std::to_string(lo) + " to " + std::to_string(hi));
      }
    }
  }

  void verify_arange(const Operation &op) const {
    expect_counts(op, 0, 1);
    int64_t start = expect_int_attr(op, "start");
    int64_t end = expect_int_attr(op, "end");
    std::string range =
        "arange(" + std::to_string(start) + ", " + std::to_string(end) + ")";
    if (end <= start)
      fail(op, range + " is empty; expected end > start");
    if (!is_power_of_two(end - start))
      fail(op, range + " has " + std::to_string(end - start) +
                   " elements; expected end - start to be a power of two");
    expect_result_type(op,
                       Type::block(Type::scalar(Scalar::I32), {end - start}));
  }

  void verify_splat(const Operation &op) const {
    expect_counts(op, 1, 1);
    const Type &in = op.operand(0)->type();
    const Type &out = op.result()->type();
    if (in.is_block())
      fail(op, operand_str(op, 0) + " is a block; expected a scalar "
                                    "(use broadcast for blocks)");
    if (!out.is_block())
      fail(op, "result has scalar type " + out.str() + "; expected a block");
    expect_result_type(op, Type::block(in, out.shape()));
  }

  void verify_broadcast(const Operation &op) const {
    expect_counts(op, 1, 1);
    const Type &in = op.operand(0)->type();
    const Type &out = op.result()->type();
    if (!in.is_block())
      fail(op, operand_str(op, 0) + " is a scalar; expected a block (use "
                                    "splat for scalars)");
    if (in.element_type() != out.element_type() || in.rank() != out.rank())
      fail(op, "result type " + out.str() +
                   " does not keep the element type "
                   "and rank of " +
                   operand_str(op, 0) +
                   "; expected only dimensions of size 1 to change");
    for (int d = 0; d < in.rank(); ++d)
      if (in.dim(d) != out.dim(d) && in.dim(d) != 1)
        fail(op, "cannot broadcast dimension " + std::to_string(d) +
                     " of size " + std::to_string(in.dim(d)) + " to " +
                     std::to_string(out.dim(d)) +
                     "; expected the operand's dimension to be 1 or equal");
  }

  void verify_expand_dims(const Operation &op) const {
    expect_counts(op, 1, 1);
    const Type &in = op.operand(0)->type();
    int64_t axis = expect_axis(op, in.rank() + 1);
    if (in.rank() + 1 > kMaxRank)
      fail(op, operand_str(op, 0) + " already has rank " +
                   std::to_string(in.rank()) + "; expected at most " +
                   std::to_string(kMaxRank - 1));
    auto shape = in.shape();
    shape.insert(shape.begin() + axis, 1);
    expect_result_type(op, Type::block(in.element_type(), shape));
  }

  void verify_reshape(const Operation &op) const {
    expect_counts(op, 1, 1);
    const Type &in = op.operand(0)->type();
    const Type &out = op.result()->type();
    if (in.element_type() != out.element_type())
      fail(op, "result type " + out.str() + " changes the element type of " +
                   operand_str(op, 0) + "; expected the same element type");
    if (in.num_elements() != out.num_elements())
      fail(op, "result type " + out.str() + " has " +
                   std::to_string(out.num_elements()) + " elements but " +
                   operand_str(op, 0) + " has " +
                   std::to_string(in.num_elements()) +
                   "; expected the same element count");
  }

  void verify_permute(const Operation &op) const {
    expect_counts(op, 1, 1);
    const Type &in = op.operand(0)->type();
    const auto &order = expect_ints_attr(op, "order");
    std::vector<int64_t> sorted(order);
    std::sort(sorted.begin(), sorted.end());
    bool is_permutation = sorted.size() == static_cast<size_t>(in.rank());
    for (size_t i = 0; is_permutation && i < sorted.size(); ++i)
      is_permutation = sorted[i] == static_cast<int64_t>(i);
    if (!is_permutation)
      fail(op, "order " + shape_str(order) + " is not a permutation of the " +
                   std::to_string(in.rank()) + " dimensions of " +
                   operand_str(op, 0));
    std::vector<int64_t> shape;
    for (int64_t d : order)
      shape.push_back(in.dim(static_cast<int>(d)));
    expect_result_type(op, Type::block(in.element_type(), shape));
  }

  void verify_join(const Operation &op) const {
    expect_counts(op, 2, 1);
    expect_same_type(op, 0, 1);
    const Type &in = op.operand(0)->type();
    if (in.rank() + 1 > kMaxRank)
      fail(op, operand_str(op, 0) + " has rank " + std::to_string(in.rank()) +
                   "; expected at most " + std::to_string(kMaxRank - 1));
    auto shape = in.shape();
    shape.push_back(2);
    expect_result_type(op, Type::block(in.element_type(), shape));
  }

  void verify_split(const Operation &op) const {
    expect_counts(op, 1, 2);
    const Type &in = op.operand(0)->type();
    if (!in.is_block() || in.dim(in.rank() - 1) != 2)
      fail(op, operand_str(op, 0) +
                   " cannot be split; expected a last dimension of size 2");
    auto shape = in.shape();
    shape.pop_back();
    Type half = Type::block(in.element_type(), shape);
    expect_result_type(op, half, 0);
    expect_result_type(op, half, 1);
  }

  void verify_cat(const Operation &op) const {
    expect_counts(op, 2, 1);
    const Type &a = op.operand(0)->type();
    const Type &b = op.operand(1)->type();
    if (!a.is_block())
      fail(op, operand_str(op, 0) + " is a scalar; expected a block");
    if (a.element_type() != b.element_type() || a.rank() != b.rank())
      fail(op, operand_str(op, 1) +
                   " does not have the element type and "
                   "rank of " +
                   operand_str(op, 0) + "; expected both to match");
    int64_t axis = expect_axis(op, a.rank());
    auto shape = a.shape();
    for (int d = 0; d < a.rank(); ++d)
      if (d != axis && a.dim(d) != b.dim(d))
        fail(op, "operands differ in dimension " + std::to_string(d) + " (" +
                     std::to_string(a.dim(d)) + " vs " +
                     std::to_string(b.dim(d)) +
                     "); expected equal sizes outside the axis " +
                     std::to_string(axis));
    shape[axis] += b.dim(static_cast<int>(axis));
    expect_result_type(op, Type::block(a.element_type(), shape));
  }

  void verify_conversion(const Operation &op) const {
    expect_counts(op, 1, 1);
    const Type &in = op.operand(0)->type();
    const Type &out = op.result()->type();
    if (in.shape() != out.shape())
      fail(op, "result type " + out.str() + " does not have the shape of " +
                   operand_str(op, 0) + "; expected the same shape");
    switch (op.code()) {
    case OpCode::Cast:
      if (in.is_pointer() != out.is_pointer())
        fail(op, "converts between pointers and numbers (" + in.str() + " to " +
                     out.str() +
                     "); expected ptr_to_int or int_to_ptr for that");
      return;
    case OpCode::Bitcast:
      if (scalar_bits(in.element()) != scalar_bits(out.element()))
        fail(op, "changes the element width from " +
                     std::to_string(scalar_bits(in.element())) + " to " +
                     std::to_string(scalar_bits(out.element())) +
                     " bits; expected elements of the same width");
      return;
    case OpCode::PtrToInt:
      expect_pointer(op, 0);
      expect_result_type(op, in.with_element(Type::scalar(Scalar::I64)));
      return;
    case OpCode::IntToPtr:
      if (in.element() != Scalar::I64)
        fail(op, operand_str(op, 0) + " is not i64; expected i64 elements");
      if (!out.is_pointer())
        fail(op, "result type " + out.str() +
                     " is not a pointer; expected pointer elements");
      return;
    default:
      return;
    }
  }

  /// Elementwise ops whose operands and result share one type.
  void verify_arithmetic(const Operation &op) const {
    OpCode c = op.code();
    size_t arity = c == OpCode::Fma ? 3
                   : (c == OpCode::Neg || c == OpCode::Not ||
                      c == OpCode::Abs || is_unary_math(c))
                       ? 1
                       : 2;
    expect_counts(op, arity, 1);
    for (size_t i = 1; i < arity; ++i)
      expect_same_type(op, 0, i);
    const Type &t = op.operand(0)->type();
    expect_result_type(op, t);
    if (t.is_pointer())
      fail(op, "is not defined on pointers (" + t.str() +
                   "); expected numbers (use addptr for pointer offsets)");
    if (is_fp8(t.element()))
      fail(op, "is not defined on " + t.str() +
                   ": fp8 is a storage format; expected a cast to f16 or "
                   "f32 first");
    bool integer_only = c == OpCode::And || c == OpCode::Or ||
                        c == OpCode::Xor || c == OpCode::Shl ||
                        c == OpCode::Shr || c == OpCode::Not ||
                        c == OpCode::Umulhi;
    bool float_only = c == OpCode::Fma || is_unary_math(c);
    if (integer_only && !t.is_integer())
      fail(op, "is not defined on " + t.str() + "; expected integer elements");
    if (float_only && !is_computable_float(t))
      fail(op, "is not defined on " + t.str() + "; expected float elements");
    if (op.has_attr(kSubnormalsAttr))
      verify_subnormals(op);
  }

  /// `subnormals = "flush"`: on f32 exp2 only, the one op whose fast GPU
  /// form flushes.
  void verify_subnormals(const Operation &op) const {
    const std::string &how = expect_string_attr(op, kSubnormalsAttr);
    if (how != "flush")
      fail(op, "has subnormals '" + how + "'; expected 'flush'");
    if (op.code() != OpCode::Exp2)
      fail(op, "has subnormals = \"flush\", which only exp2 takes");
    if (op.operand(0)->type().element() != Scalar::F32)
      fail(op, "flushes subnormals of " + op.operand(0)->type().str() +
                   "; only f32 exp2 flushes");
  }

  void verify_cmp(const Operation &op) const {
    expect_counts(op, 2, 1);
    expect_same_type(op, 0, 1);
    const Type &t = op.operand(0)->type();
    if (is_fp8(t.element()))
      fail(op, "cannot compare " + t.str() +
                   ": fp8 is a storage format; expected a cast first");
    static const std::set<std::string> predicates = {"eq", "ne", "lt",
                                                     "le", "gt", "ge"};
    const std::string &p = expect_string_attr(op, "predicate");
    if (!predicates.count(p))
      fail(op, "has predicate '" + p +
                   "'; expected one of eq, ne, lt, le, "
                   "gt, ge");
    expect_result_type(op, t.with_element(Type::scalar(Scalar::I1)));
  }

  void verify_addptr(const Operation &op) const {
    expect_counts(op, 2, 1);
    expect_pointer(op, 0);
    const Type &offset = op.operand(1)->type();
    if (!offset.is_integer() || offset.is_bool())
      fail(op, "offset " + operand_str(op, 1) +
                   " is not an integer; expected integer elements (i8 to u64)");
    expect_same_shape(op, 0, 1);
    expect_result_type(op, op.operand(0)->type());
  }

  void verify_select(const Operation &op) const {
    expect_counts(op, 3, 1);
    if (op.operand(0)->type().element() != Scalar::I1)
      fail(op, "condition " + operand_str(op, 0) +
                   " is not boolean; expected i1 elements");
    expect_same_type(op, 1, 2);
    expect_same_shape(op, 1, 0);
    expect_result_type(op, op.operand(1)->type());
  }

  void verify_memory_hints(const Operation &op) const {
    expect_optional_attr<std::string>(op, "cache", "a string");
    expect_optional_attr<std::string>(op, "eviction", "a string");
  }

  void verify_load(const Operation &op) const {
    expect_counts(op, 1, 3, 1, 0);
    expect_pointer(op, 0);
    const Type &ptr = op.operand(0)->type();
    Type loaded = ptr.with_element(Type::scalar(ptr.pointee()));
    expect_result_type(op, loaded);
    if (op.num_operands() >= 2)
      expect_bool_mask(op, 1, 0, "mask");
    if (op.num_operands() == 3 && op.operand(2)->type() != loaded)
      fail(op, "'other' " + operand_str(op, 2) +
                   " does not have the loaded type; expected " + loaded.str());
    verify_memory_hints(op);
    expect_optional_attr<int64_t>(op, "volatile", "an integer");
  }

  void verify_store(const Operation &op) const {
    expect_counts(op, 2, 3, 0, 0);
    expect_pointer(op, 0);
    const Type &ptr = op.operand(0)->type();
    Type stored = ptr.with_element(Type::scalar(ptr.pointee()));
    if (op.operand(1)->type() != stored)
      fail(op, "value " + operand_str(op, 1) + " does not match the pointer " +
                   ptr.str() + "; expected " + stored.str());
    if (op.num_operands() == 3)
      expect_bool_mask(op, 2, 0, "mask");
    verify_memory_hints(op);
  }

  void verify_atomic_rmw(const Operation &op) const {
    expect_counts(op, 2, 3, 1, 0);
    expect_pointer(op, 0);
    const Type &ptr = op.operand(0)->type();
    Type element = ptr.with_element(Type::scalar(ptr.pointee()));
    if (op.operand(1)->type() != element)
      fail(op, "value " + operand_str(op, 1) + " does not match the pointer " +
                   ptr.str() + "; expected " + element.str());
    expect_result_type(op, element);
    if (op.num_operands() == 3)
      expect_bool_mask(op, 2, 0, "mask");
    static const std::set<std::string> kinds = {"add", "max", "min", "and",
                                                "or",  "xor", "xchg"};
    const std::string &kind = expect_string_attr(op, "kind");
    if (!kinds.count(kind))
      fail(op, "has kind '" + kind +
                   "'; expected one of add, max, min, and, "
                   "or, xor, xchg");
    bool bitwise = kind == "and" || kind == "or" || kind == "xor";
    if (bitwise && !element.is_integer())
      fail(op, "atomic " + kind + " is not defined on " + element.str() +
                   "; expected integer elements");
    expect_optional_attr<std::string>(op, "sem", "a string");
    expect_optional_attr<std::string>(op, "scope", "a string");
  }

  void verify_atomic_cas(const Operation &op) const {
    expect_counts(op, 3, 1);
    expect_pointer(op, 0);
    const Type &ptr = op.operand(0)->type();
    Type element = ptr.with_element(Type::scalar(ptr.pointee()));
    for (size_t i = 1; i < 3; ++i)
      if (op.operand(i)->type() != element)
        fail(op, operand_str(op, i) + " does not match the pointer " +
                     ptr.str() + "; expected " + element.str());
    expect_result_type(op, element);
    expect_optional_attr<std::string>(op, "sem", "a string");
    expect_optional_attr<std::string>(op, "scope", "a string");
  }

  void verify_descriptor_access(const Operation &op) const {
    bool store = op.code() == OpCode::DescriptorStore;
    size_t fixed = store ? 2 : 1;
    if (op.num_operands() < fixed)
      fail(op, "has " + plural(op.num_operands(), "operand") +
                   "; expected a base, one extent, stride and offset per "
                   "dimension" +
                   (store ? ", then the value" : ""));
    expect_counts(op, op.num_operands(), store ? 0 : 1);
    DescriptorOperands d(op);
    const Type &tile = d.tile_type();
    const char *tile_name = store ? "value" : "result";
    if (!tile.is_block())
      fail(op, std::string(tile_name) + " " + tile.str() +
                   " is a scalar; expected a block (the tile)");
    if (op.num_operands() != fixed + 3 * static_cast<size_t>(tile.rank()))
      fail(op, "has " + plural(op.num_operands(), "operand") + " for the " +
                   std::string(tile_name) + " " + tile.str() + " of rank " +
                   std::to_string(tile.rank()) + "; expected " +
                   std::to_string(fixed + 3 * tile.rank()) +
                   " (a base, one extent, stride and offset per dimension" +
                   (store ? ", then the value)" : ")"));
    const Type &base = d.base()->type();
    if (!base.is_pointer() || base.is_block())
      fail(op, "base " + operand_str(op, 0) +
                   " is not a scalar pointer; expected the array's base "
                   "pointer");
    if (base.pointee() == Scalar::Ptr)
      fail(op, "base " + operand_str(op, 0) +
                   " points to pointers; expected a pointer to numbers");
    Type element = Type::scalar(base.pointee());
    if (tile.element_type() != element)
      fail(op, std::string(tile_name) + " " + tile.str() +
                   " does not hold the base's pointee; expected " +
                   tile.with_element(element).str());
    for (int i = 0; i < tile.rank(); ++i) {
      expect_index_scalar(op, 1 + i, "extent", Scalar::I64);
      expect_index_scalar(op, 1 + tile.rank() + i, "stride", Scalar::I64);
      const size_t offset = 1 + 2 * tile.rank() + i;
      if (op.operand(offset)->type() != Type::scalar(Scalar::I64))
        expect_index_scalar(op, offset, "offset", Scalar::I32);
    }
  }

  /// Operand i of a descriptor access is an extent, stride or offset.
  void expect_index_scalar(const Operation &op, size_t i, const char *what,
                           Scalar expected) const {
    if (op.operand(i)->type() != Type::scalar(expected))
      fail(op, std::string(what) + " " + operand_str(op, i) + " is not " +
                   std::string(scalar_name(expected)) + "; expected an " +
                   std::string(scalar_name(expected)) + " scalar");
  }

  void verify_reduce_or_scan(Operation &op) {
    bool reduce = op.code() == OpCode::Reduce;
    size_t n = op.num_operands();
    if (n == 0)
      fail(op, "has no operands; expected at least one block");
    expect_counts(op, n, n, n, 1);
    const Type &first = op.operand(0)->type();
    if (!first.is_block())
      fail(op, operand_str(op, 0) + " is a scalar; expected a block");
    for (size_t i = 1; i < n; ++i)
      expect_same_shape(op, 0, i);
    int64_t axis = expect_axis(op, first.rank());
    if (!reduce)
      expect_optional_attr<int64_t>(op, "reverse", "an integer");
    std::vector<Type> elements;
    for (size_t i = 0; i < n; ++i) {
      const Type &t = op.operand(i)->type();
      elements.push_back(t.element_type());
      Type expected = t;
      if (reduce) {
        auto shape = t.shape();
        shape.erase(shape.begin() + axis);
        expected = Type::block(t.element_type(), shape);
      }
      expect_result_type(op, expected, i);
    }
    Block *combine = op.region(0);
    if (combine->num_arguments() != 2 * n)
      fail(op, "combine region has " +
                   plural(combine->num_arguments(), "argument") +
                   "; expected " + std::to_string(2 * n) +
                   " (two scalars per operand)");
    for (size_t i = 0; i < 2 * n; ++i)
      if (combine->argument(i)->type() != elements[i % n])
        fail(op, "combine region argument " + std::to_string(i) + " has type " +
                     combine->argument(i)->type().str() + "; expected " +
                     elements[i % n].str() + " (an element of operand " +
                     std::to_string(i % n) + ")");
    verify_block(*combine, &op);
    expect_yield(op, *combine, elements, "combine region",
                 "one element per operand");
    expect_pure(op, *combine);
  }

  /// No op of `block` or of its nested regions touches memory, prints or
  /// asserts (the combine region of `collective`).
  void expect_pure(const Operation &collective, const Block &block) const {
    for (const auto &owned : block.ops()) {
      const Operation &inner = *owned;
      if (is_impure_in_combine(inner.code()))
        fail(inner, "is inside the combine region of " + collective.describe() +
                        "; a combine region is a pure function of the "
                        "elements it combines: no memory access, print or "
                        "assert");
      for (size_t r = 0; r < inner.num_regions(); ++r)
        expect_pure(collective, *inner.region(r));
    }
  }

  void verify_dot(const Operation &op) const {
    expect_counts(op, 3, 1);
    const Type &a = op.operand(0)->type();
    const Type &b = op.operand(1)->type();
    const Type &acc = op.operand(2)->type();
    for (size_t i = 0; i < 3; ++i) {
      const Type &t = op.operand(i)->type();
      if ((t.rank() != 2 && t.rank() != 3) || t.rank() != a.rank())
        fail(op, operand_str(op, i) + " has rank " + std::to_string(t.rank()) +
                     "; expected rank 2 for all operands (or 3 with a "
                     "shared batch dimension)");
      if (t.is_pointer())
        fail(op, operand_str(op, i) + " holds pointers; expected numbers");
    }
    int r = a.rank();
    int64_t m = a.dim(r - 2), k = a.dim(r - 1);
    int64_t kb = b.dim(r - 2), n = b.dim(r - 1);
    if (k != kb)
      fail(op, "a is " + std::to_string(m) + "x" + std::to_string(k) +
                   " but b is " + std::to_string(kb) + "x" + std::to_string(n) +
                   "; expected a MxK and b KxN (inner dimensions equal)");
    if (acc.dim(r - 2) != m || acc.dim(r - 1) != n)
      fail(op, "accumulator " + acc.str() + " is not " + std::to_string(m) +
                   "x" + std::to_string(n) +
                   "; expected MxN for a MxK and b KxN");
    if (r == 3 && (b.dim(0) != a.dim(0) || acc.dim(0) != a.dim(0)))
      fail(op, "operands have different batch sizes; expected one leading "
               "batch dimension shared by a, b and the accumulator");
    bool both_fp8 = is_fp8(a.element()) && is_fp8(b.element());
    if (a.element_type() != b.element_type() && !both_fp8)
      fail(op, "a has " + a.element_type().str() + " elements but b has " +
                   b.element_type().str() + "; expected the same element type");
    expect_result_type(op, acc);
    auto it = op.attributes().find("input_precision");
    if (it != op.attributes().end()) {
      const std::string &p = expect_string_attr(op, "input_precision");
      if (p != "tf32" && p != "tf32x3" && p != "ieee")
        fail(op,
             "has input_precision '" + p + "'; expected tf32, tf32x3 or ieee");
    }
  }

  void verify_hint(const Operation &op) const {
    expect_counts(op, 1, 1);
    const Type &t = op.operand(0)->type();
    expect_result_type(op, t);
    const auto &values = expect_ints_attr(op, "values");
    size_t dims = std::max(1, t.rank());
    if (values.size() != dims)
      fail(op, "has " + plural(values.size(), "value") + " for " +
                   operand_str(op, 0) + "; expected one per dimension (" +
                   std::to_string(dims) + ")");
    for (int64_t v : values)
      if (v < 1)
        fail(op, "has hint value " + std::to_string(v) +
                     "; expected positive values");
  }

  void verify_for(Operation &op) {
    if (op.num_operands() < 3)
      fail(op, "has " + plural(op.num_operands(), "operand") +
                   "; expected at least 3 (lower bound, upper bound, step)");
    size_t carried = op.num_operands() - 3;
    expect_counts(op, 3 + carried, carried, 1);
    expect_optional_attr<int64_t>(op, kWarpSpecialize, "an integer");
    const Type &iv = op.operand(0)->type();
    if (!iv.is_integer() || iv.is_block() || iv.is_bool())
      fail(op, "lower bound " + operand_str(op, 0) +
                   " is not an integer scalar; expected bounds and step of "
                   "one integer type");
    for (size_t i = 1; i < 3; ++i)
      if (op.operand(i)->type() != iv)
        fail(op, std::string(i == 1 ? "upper bound " : "step ") +
                     operand_str(op, i) +
                     " does not have the type of the "
                     "lower bound (" +
                     iv.str() + "); expected bounds and step of one type");
    std::vector<Type> carried_types;
    for (size_t i = 0; i < carried; ++i) {
      carried_types.push_back(op.operand(3 + i)->type());
      expect_result_type(op, carried_types.back(), i);
    }
    Block *body = op.region(0);
    if (body->num_arguments() != carried + 1)
      fail(op, "body has " + plural(body->num_arguments(), "argument") +
                   "; expected " + std::to_string(carried + 1) +
                   " (the induction variable, then one per loop-carried "
                   "value)");
    if (body->argument(0)->type() != iv)
      fail(op, "induction variable has type " +
                   body->argument(0)->type().str() + "; expected " + iv.str() +
                   " (the type of the bounds)");
    for (size_t i = 0; i < carried; ++i)
      if (body->argument(i + 1)->type() != carried_types[i])
        fail(op, "body argument " + std::to_string(i + 1) + " has type " +
                     body->argument(i + 1)->type().str() + "; expected " +
                     carried_types[i].str() + " (the type of initial value " +
                     std::to_string(i) + ")");
    verify_block(*body, &op);
    expect_yield(op, *body, carried_types, "body",
                 "one per loop-carried value");
  }

  void verify_if(Operation &op) {
    expect_counts(op, 1, op.num_results(), 2);
    const Type &cond = op.operand(0)->type();
    if (cond.is_block() || cond.element() != Scalar::I1)
      fail(op, "condition " + operand_str(op, 0) +
                   " is not an i1 scalar; expected an i1 scalar (use select "
                   "for a block of conditions)");
    std::vector<Type> types;
    for (Value *r : op.results())
      types.push_back(r->type());
    const char *names[] = {"then-region", "else-region"};
    for (size_t i = 0; i < 2; ++i) {
      Block *region = op.region(i);
      if (region->num_arguments() != 0)
        fail(op, std::string(names[i]) + " has " +
                     plural(region->num_arguments(), "argument") +
                     "; expected none");
      verify_block(*region, &op);
      expect_yield(op, *region, types, names[i], "one per result of the if");
    }
  }

  Function &function_;
  /// Values visible at the current point of the walk.
  std::unordered_set<const Value *> visible_;
};

} // namespace

void verify(Function &f) { Verifier(f).run(); }

} // namespace blocc::ir
