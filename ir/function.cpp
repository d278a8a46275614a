#include "ir/function.h"

#include <atomic>

#include "ir/error.h"

#include <algorithm>

namespace blocc::ir {

Block *Value::owner_block() const {
  return defining_op_ ? defining_op_->parent_block() : owner_block_;
}

Operation::Operation(OpCode code, std::vector<Value *> operands,
                     const std::vector<Type> &result_types,
                     Attributes attributes, Location loc)
    : code_(code), operands_(std::move(operands)),
      attributes_(std::move(attributes)), loc_(std::move(loc)) {
  for (const Type &t : result_types)
    add_result(t);
}

std::vector<Value *> Operation::results() const {
  std::vector<Value *> v;
  for (const auto &r : results_)
    v.push_back(r.get());
  return v;
}

Value *Operation::add_result(Type t) {
  results_.push_back(std::make_unique<Value>(
      t, this, nullptr, static_cast<int>(results_.size())));
  return results_.back().get();
}

void Operation::erase_result(size_t i) {
  results_.erase(results_.begin() + static_cast<long>(i));
  for (size_t j = i; j < results_.size(); ++j)
    results_[j]->set_index(static_cast<int>(j));
}

namespace {
template <typename T>
const T &attr_of_kind(const Operation &op, const std::string &name,
                      const char *kind) {
  auto it = op.attributes().find(name);
  if (it == op.attributes().end())
    throw Error(op.describe() + ": missing attribute '" + name + "'");
  if (!std::holds_alternative<T>(it->second))
    throw Error(op.describe() + ": attribute '" + name + "' is not " + kind);
  return std::get<T>(it->second);
}
} // namespace

int64_t Operation::int_attr(const std::string &name) const {
  return attr_of_kind<int64_t>(*this, name, "an integer");
}
const std::string &Operation::string_attr(const std::string &name) const {
  return attr_of_kind<std::string>(*this, name, "a string");
}
const std::vector<int64_t> &
Operation::ints_attr(const std::string &name) const {
  return attr_of_kind<std::vector<int64_t>>(*this, name, "a list of integers");
}
std::optional<CarriedValues> carried_values(const Value *v) {
  const Block *body = v->owner_block();
  const Operation *loop = body ? body->parent_op() : nullptr;
  if (!v->is_block_argument() || !loop || loop->code() != OpCode::For ||
      v->index() == 0)
    return std::nullopt;
  const size_t k = static_cast<size_t>(v->index() - 1);
  return CarriedValues{loop->operand(3 + k), body->terminator()->operand(k)};
}

bool flushes_subnormals(const Operation &op) {
  return op.string_attr_or(kSubnormalsAttr, "") == "flush";
}

std::string Operation::string_attr_or(const std::string &name,
                                      const std::string &fallback) const {
  auto it = attributes_.find(name);
  if (it == attributes_.end() ||
      !std::holds_alternative<std::string>(it->second))
    return fallback;
  return std::get<std::string>(it->second);
}

Block *Operation::add_region() {
  regions_.push_back(std::make_unique<Block>(this));
  return regions_.back().get();
}

Operation *Operation::parent_op() const {
  return parent_ ? parent_->parent_op() : nullptr;
}

std::string Operation::describe() const {
  std::string s(name());
  if (loc_.known())
    s += " at " + loc_.str();
  return s;
}

void Operation::walk(const std::function<void(Operation &)> &f) {
  f(*this);
  for (auto &region : regions_)
    for (auto &op : region->ops())
      op->walk(f);
}

void Operation::walk(const std::function<void(const Operation &)> &f) const {
  f(*this);
  for (const auto &region : regions_)
    for (const auto &op : region->ops())
      static_cast<const Operation &>(*op).walk(f);
}

std::vector<Value *> Block::arguments() const {
  std::vector<Value *> v;
  for (const auto &a : arguments_)
    v.push_back(a.get());
  return v;
}

Value *Block::add_argument(Type t) {
  arguments_.push_back(std::make_unique<Value>(
      t, nullptr, this, static_cast<int>(arguments_.size())));
  return arguments_.back().get();
}

void Block::erase_argument(size_t i) {
  arguments_.erase(arguments_.begin() + static_cast<long>(i));
  for (size_t j = i; j < arguments_.size(); ++j)
    arguments_[j]->set_index(static_cast<int>(j));
}

Operation *Block::terminator() const {
  Operation *last = back();
  return last && is_terminator(last->code()) ? last : nullptr;
}

Block::iterator Block::insert(iterator pos, std::unique_ptr<Operation> op) {
  op->parent_ = this;
  return ops_.insert(pos, std::move(op));
}

Block::iterator Block::find(const Operation *op) {
  return std::find_if(ops_.begin(), ops_.end(),
                      [&](const auto &p) { return p.get() == op; });
}

std::unique_ptr<Operation> Block::remove(Operation *op) {
  auto it = find(op);
  if (it == ops_.end())
    throw Error("internal: removing " + op->describe() +
                " from a block that does not hold it");
  std::unique_ptr<Operation> owned = std::move(*it);
  ops_.erase(it);
  owned->parent_ = nullptr;
  return owned;
}

bool Block::is_nested_in(const Block *other) const {
  for (const Block *b = this; b;) {
    if (b == other)
      return true;
    Operation *p = b->parent_op();
    b = p ? p->parent_block() : nullptr;
  }
  return false;
}

Value *Function::add_argument(Type t, ArgumentInfo info) {
  argument_infos_.push_back(std::move(info));
  return body_.add_argument(t);
}

void Function::walk(const std::function<void(Operation &)> &f) {
  for (auto &op : body_.ops())
    op->walk(f);
}

void Function::walk(const std::function<void(const Operation &)> &f) const {
  for (const auto &op : body_.ops())
    static_cast<const Operation &>(*op).walk(f);
}

void Function::replace_all_uses(Value *from, Value *to) {
  replace_all_uses(std::map<Value *, Value *>{{from, to}});
}

void Function::replace_all_uses(const std::map<Value *, Value *> &map) {
  if (map.empty())
    return;
  walk([&](Operation &op) {
    for (size_t i = 0; i < op.num_operands(); ++i) {
      auto it = map.find(op.operand(i));
      if (it != map.end())
        op.set_operand(i, it->second);
    }
  });
}

bool Function::has_uses(const Value *v) {
  bool used = false;
  walk([&](Operation &op) {
    for (Value *o : op.operands())
      used |= (o == v);
  });
  return used;
}

uint64_t Function::next_unique_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

} // namespace blocc::ir
