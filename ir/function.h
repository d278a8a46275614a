// The structure of the block IR: a Function owns one Block (its body); a
// Block owns its arguments and a list of Operations; an Operation owns its
// results and its regions (each region is one Block). Values are SSA:
// defined once, by an operation result or a block argument, and used by
// operations nested anywhere below the definition.
#pragma once

#include "ir/location.h"
#include "ir/opcode.h"
#include "ir/type.h"

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace blocc::ir {

class Block;
class Operation;

/// An attribute value: an integer, a float, a string, or a list of integers.
using Attribute =
    std::variant<int64_t, double, std::string, std::vector<int64_t>>;
/// Attributes by name; std::map keeps the printed order deterministic.
using Attributes = std::map<std::string, Attribute>;

class Value {
public:
  Value(Type type, Operation *op, Block *block, int index)
      : type_(type), defining_op_(op), owner_block_(block), index_(index) {}

  const Type &type() const { return type_; }
  void set_type(Type t) { type_ = t; }
  /// The operation whose result this is, or nullptr for a block argument.
  Operation *defining_op() const { return defining_op_; }
  /// For a block argument, its block; for a result, the defining op's block.
  Block *owner_block() const;
  bool is_block_argument() const { return defining_op_ == nullptr; }
  /// Position among the defining op's results or the block's arguments.
  int index() const { return index_; }
  void set_index(int i) { index_ = i; }

private:
  Type type_;
  Operation *defining_op_;
  Block *owner_block_;
  int index_;
};

class Operation {
public:
  Operation(OpCode code, std::vector<Value *> operands,
            const std::vector<Type> &result_types, Attributes attributes,
            Location loc);

  OpCode code() const { return code_; }
  std::string_view name() const { return opcode_name(code_); }

  const std::vector<Value *> &operands() const { return operands_; }
  size_t num_operands() const { return operands_.size(); }
  Value *operand(size_t i) const { return operands_[i]; }
  void set_operand(size_t i, Value *v) { operands_[i] = v; }
  void set_operands(std::vector<Value *> v) { operands_ = std::move(v); }

  size_t num_results() const { return results_.size(); }
  Value *result(size_t i = 0) const { return results_[i].get(); }
  std::vector<Value *> results() const;
  Value *add_result(Type t);
  /// Removes result i; it must have no uses.
  void erase_result(size_t i);

  const Attributes &attributes() const { return attributes_; }
  Attributes &attributes() { return attributes_; }
  bool has_attr(const std::string &name) const {
    return attributes_.count(name) != 0;
  }
  void set_attr(const std::string &name, Attribute value) {
    attributes_[name] = std::move(value);
  }
  /// Typed accessors; they throw blocc::Error naming the op when the
  /// attribute is missing or of another kind.
  int64_t int_attr(const std::string &name) const;
  const std::string &string_attr(const std::string &name) const;
  const std::vector<int64_t> &ints_attr(const std::string &name) const;
  /// The string attribute, or `fallback` when absent.
  std::string string_attr_or(const std::string &name,
                             const std::string &fallback) const;

  size_t num_regions() const { return regions_.size(); }
  Block *region(size_t i) const { return regions_[i].get(); }
  Block *add_region();

  const Location &loc() const { return loc_; }
  void set_loc(Location l) { loc_ = std::move(l); }

  /// The block that holds this op (nullptr while detached).
  Block *parent_block() const { return parent_; }
  /// The op whose region holds this op's block, or nullptr at top level.
  Operation *parent_op() const;

  /// "add at kernel.cpp:12" (or just "add" when the line is unknown): how
  /// messages name an operation.
  std::string describe() const;

  /// Calls f on this op and every op nested in its regions, parents first.
  void walk(const std::function<void(Operation &)> &f);
  void walk(const std::function<void(const Operation &)> &f) const;

private:
  friend class Block;
  OpCode code_;
  std::vector<Value *> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  Attributes attributes_;
  std::vector<std::unique_ptr<Block>> regions_;
  Location loc_;
  Block *parent_ = nullptr;
};

/// A for's attribute `warp_specialize = 1` (bl::LoopOptions): the loop
/// asks for a producer warpgroup of its own where a backend can give it
/// one (backends/nvptx/warp_specialize.cpp); the others ignore it.
inline constexpr const char *kWarpSpecialize = "warp_specialize";

/// exp2's attribute `subnormals = "flush"` (bl::Subnormals::Flush): f32
/// results below 2^-126, the smallest normal f32, are +0.
inline constexpr const char *kSubnormalsAttr = "subnormals";
bool flushes_subnormals(const Operation &op);

class Block {
public:
  using OpList = std::list<std::unique_ptr<Operation>>;
  using iterator = OpList::iterator;

  explicit Block(Operation *parent_op = nullptr) : parent_op_(parent_op) {}

  size_t num_arguments() const { return arguments_.size(); }
  Value *argument(size_t i) const { return arguments_[i].get(); }
  std::vector<Value *> arguments() const;
  Value *add_argument(Type t);
  /// Removes argument i; it must have no uses.
  void erase_argument(size_t i);

  OpList &ops() { return ops_; }
  const OpList &ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  Operation *back() const { return ops_.empty() ? nullptr : ops_.back().get(); }
  /// The terminator (yield or return), or nullptr when the block has none.
  Operation *terminator() const;

  iterator insert(iterator pos, std::unique_ptr<Operation> op);
  Operation *append(std::unique_ptr<Operation> op) {
    return insert(ops_.end(), std::move(op))->get();
  }
  iterator find(const Operation *op);
  /// Detaches op from this block and hands it over.
  std::unique_ptr<Operation> remove(Operation *op);
  /// Destroys op; its results must have no uses.
  void erase(Operation *op) { remove(op); }

  Operation *parent_op() const { return parent_op_; }
  /// True when `this` is `other` or nested (at any depth) inside it.
  bool is_nested_in(const Block *other) const;

private:
  friend class Operation;
  std::vector<std::unique_ptr<Value>> arguments_;
  OpList ops_;
  Operation *parent_op_;
};

/// What a for loop gives a carried argument of its body (any but the
/// induction variable): the loop's initial operand, and the value the body
/// yields for the next iteration.
struct CarriedValues {
  const Value *initial = nullptr;
  const Value *yielded = nullptr;
};
/// Those of `v`, where it is such an argument.
std::optional<CarriedValues> carried_values(const Value *v);

/// Per-argument facts of a kernel specialization (Triton's specialization
/// key): a pointer known to be 16-byte aligned, an integer known to be
/// divisible by 16. They seed the axis-info analysis.
struct ArgumentInfo {
  std::string name;         // for messages and the printer; may be empty
  int64_t divisibility = 1; // pointers: alignment in bytes; integers: divisor
};

class Function {
public:
  explicit Function(std::string name) : name_(std::move(name)) {}

  const std::string &name() const { return name_; }
  /// A number no other Function of this process has, so that a cache may
  /// remember what it compiled from this one (it must not change after).
  uint64_t unique_id() const { return unique_id_; }
  Block &body() { return body_; }
  const Block &body() const { return body_; }

  Value *add_argument(Type t, ArgumentInfo info = {});
  size_t num_arguments() const { return body_.num_arguments(); }
  Value *argument(size_t i) const { return body_.argument(i); }
  ArgumentInfo &argument_info(size_t i) { return argument_infos_[i]; }
  const ArgumentInfo &argument_info(size_t i) const {
    return argument_infos_[i];
  }

  /// What a backend's level of the IR says of the whole function (the GPU
  /// IR's blocked layouts, which many values share); none in block IR.
  const Attributes &attributes() const { return attributes_; }
  Attributes &attributes() { return attributes_; }

  /// Every op, parents before the ops in their regions, in program order.
  void walk(const std::function<void(Operation &)> &f);
  void walk(const std::function<void(const Operation &)> &f) const;

  /// Rewrites every use of `from` (in any op of the function) to `to`.
  void replace_all_uses(Value *from, Value *to);
  /// Rewrites every use of each key of `map` to its value, in one walk.
  void replace_all_uses(const std::map<Value *, Value *> &map);
  /// True when some op of the function uses v.
  bool has_uses(const Value *v);

private:
  static uint64_t next_unique_id();

  std::string name_;
  uint64_t unique_id_ = next_unique_id();
  Block body_;
  std::vector<ArgumentInfo> argument_infos_;
  Attributes attributes_;
};

} // namespace blocc::ir
