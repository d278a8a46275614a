#include "backends/nvptx/layout_attrs.h"

#include "backends/nvptx/shape_layouts.h"
#include "backends/nvptx/shared_layouts.h"
#include "ir/error.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <variant>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

/// "GPU IR: load at k.cpp:7: why": `where` is an op's describe() or
/// "function 'k'".
[[noreturn]] void invalid(const std::string &where, const std::string &why) {
  throw Error("GPU IR: " + where + ": " + why);
}

[[noreturn]] void invalid(const ir::Operation &op, const std::string &why) {
  invalid(op.describe(), why);
}

std::string function_place(const ir::Function &function) {
  return "function '" + function.name() + "'";
}

bool is_whole(const BlockedLayout &parent, const Layout &layout) {
  if (static_cast<int>(layout.dims.size()) != parent.rank())
    return false;
  for (size_t k = 0; k < layout.dims.size(); ++k)
    if (layout.dims[k] != static_cast<int>(k))
      return false;
  return true;
}

std::string join(const std::vector<std::string> &parts,
                 const std::string &separator) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? separator : "") + parts[i];
  return s;
}

/// `text` cut at each `separator`.
std::vector<std::string> split(const std::string &text,
                               const std::string &separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return parts;
    start = end + separator.size();
  }
}

/// The attribute names of a value's home and layouts: `home`/`layouts` for
/// the result of an op of one result, `home_K`/`layouts_K` for result K of
/// several, `argJ_home`/`argJ_layouts` for argument J of a loop's body; and
/// of its one layout in the explicit form (`layout`, `layout_K`,
/// `argJ_layout`).
struct ValueKeys {
  std::string home, layouts, layout;
};

ValueKeys result_keys(const ir::Operation &op, size_t k) {
  return {result_key(gpu_attr::kHome, op, k),
          result_key(gpu_attr::kLayouts, op, k), result_layout_key(op, k)};
}

ValueKeys argument_keys(size_t j) {
  std::string prefix = "arg" + std::to_string(j) + "_";
  return {prefix + gpu_attr::kHome, prefix + gpu_attr::kLayouts,
          argument_layout_key(j)};
}

} // namespace

std::string result_key(const std::string &name, const ir::Operation &op,
                       size_t k) {
  return op.num_results() == 1 ? name : name + "_" + std::to_string(k);
}

std::string result_layout_key(const ir::Operation &op, size_t k) {
  return result_key(gpu_attr::kLayout, op, k);
}

std::string argument_layout_key(size_t j) {
  return "arg" + std::to_string(j) + "_" + gpu_attr::kLayout;
}

bool is_layout_key(const std::string &key) {
  auto ends_with = [&](const std::string &suffix) {
    return key.size() >= suffix.size() &&
           key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  auto starts_with = [&](const std::string &prefix) {
    return key.rfind(prefix, 0) == 0;
  };
  return starts_with(gpu_attr::kHome) || starts_with(gpu_attr::kLayouts) ||
         is_explicit_layout_key(key) ||
         (starts_with("arg") &&
          (ends_with("_home") || ends_with("_layouts"))) ||
         key == gpu_attr::kStoreLayout || key == gpu_attr::kReduceLayout ||
         key == gpu_attr::kOperandLayouts;
}

bool is_explicit_layout_key(const std::string &key) {
  auto ends_with = [&](const std::string &suffix) {
    return key.size() >= suffix.size() &&
           key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return key == gpu_attr::kLayout ||
         key.rfind(std::string(gpu_attr::kLayout) + "_", 0) == 0 ||
         (key.rfind("arg", 0) == 0 && ends_with("_layout"));
}

namespace {

/// The block arguments of `op`'s regions, which its attributes describe:
/// only a loop's body has block arguments (reductions and scans combine
/// scalars).
std::vector<const ir::Value *> region_arguments(const ir::Operation &op) {
  std::vector<const ir::Value *> arguments;
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (size_t j = 0; j < op.region(r)->num_arguments(); ++j) {
      const ir::Value *argument = op.region(r)->argument(j);
      if (!argument->type().is_block())
        continue;
      if (r != 0)
        invalid(op, "internal: block arguments in a region other than the "
                    "first");
      arguments.push_back(argument);
    }
  return arguments;
}

/// Whether LayoutAssignment chose the operand layouts of `op` as a shape op
/// (shape_layouts.h).
bool reads_shape_operands(const ir::Operation &op) {
  switch (op.code()) {
  case OpCode::Reshape:
    return !only_adds_or_drops_ones(op);
  case OpCode::Permute:
  case OpCode::Join:
  case OpCode::Cat:
  case OpCode::Split:
    return true;
  default:
    return false;
  }
}

/// The (result, layout) pairs a shape op reads its operands for, in the
/// order of its results and their layouts (a split into two scalars: one,
/// for the empty layout).
std::vector<std::pair<size_t, Layout>>
shape_keys(const ir::Operation &op, const LayoutAssignment &layouts) {
  if (op.code() == OpCode::Split && !op.result(0)->type().is_block())
    return {{0, Layout{}}};
  std::vector<std::pair<size_t, Layout>> keys;
  size_t results = op.code() == OpCode::Split ? op.num_results() : 1;
  for (size_t k = 0; k < results; ++k)
    for (const Layout &layout : layouts.layouts_of(op.result(k)))
      keys.emplace_back(k, layout);
  return keys;
}

class Writer {
public:
  explicit Writer(const LayoutAssignment &layouts) : layouts_(layouts) {}

  /// The layouts of the function's arguments: blocks only in tests of
  /// passes (a kernel takes scalars and pointers), whose lowering fails.
  void arguments(ir::Function &function) {
    for (size_t i = 0; i < function.num_arguments(); ++i)
      value(function.attributes(), function_place(function),
            function.argument(i), argument_keys(i));
  }

  void op(ir::Operation &op) {
    for (size_t k = 0; k < op.num_results(); ++k)
      value(op.attributes(), op.describe(), op.result(k), result_keys(op, k));
    std::vector<const ir::Value *> arguments = region_arguments(op);
    for (const ir::Value *argument : arguments)
      value(op.attributes(), op.describe(), argument,
            argument_keys(argument->index()));
    if (op.code() == OpCode::Store && op.operand(1)->type().is_block())
      op.set_attr(
          gpu_attr::kStoreLayout,
          text(op.describe(), layouts_.store_layout(op), op.operand(1)));
    if (op.code() == OpCode::Reduce && op.operand(0)->type().is_block())
      op.set_attr(
          gpu_attr::kReduceLayout,
          text(op.describe(), layouts_.reduce_layout(op), op.operand(0)));
    if (reads_shape_operands(op))
      shape_operands(op);
  }

private:
  void value(ir::Attributes &attributes, const std::string &where,
             const ir::Value *v, const ValueKeys &keys) {
    if (const Layout *home = layouts_.home(v))
      attributes[keys.home] = text(where, *home, v);
    std::vector<std::string> needed;
    for (const Layout &layout : layouts_.layouts_of(v))
      needed.push_back(text(where, layout, v));
    if (!needed.empty())
      attributes[keys.layouts] = join(needed, "; ");
  }

  void shape_operands(ir::Operation &op) {
    std::vector<std::string> groups;
    for (const auto &[result, layout] : shape_keys(op, layouts_)) {
      std::vector<std::string> operands;
      const std::vector<Layout> &chosen =
          layouts_.shape_operand_layouts(op, result, layout);
      for (size_t i = 0; i < op.num_operands(); ++i)
        operands.push_back(text(op.describe(), chosen.at(i), op.operand(i)));
      groups.push_back(join(operands, "; "));
    }
    if (!groups.empty())
      op.set_attr(gpu_attr::kOperandLayouts, join(groups, " | "));
  }

  /// The text of `layout`, which must have `v`'s shape: the reader takes
  /// the shape from the value.
  std::string text(const std::string &where, const Layout &layout,
                   const ir::Value *v) const {
    if (layout.shape != v->type().shape())
      invalid(where, "internal: a layout of shape " + ints_text(layout.shape) +
                         " for a value of type " + v->type().str());
    return layout_text(layouts_.parent(layout), layout);
  }

  const LayoutAssignment &layouts_;
};

/// Reads the texts of layout.h's types as the attributes spell them:
/// parents "blocked<shape=[..] per_thread=[..] threads=[..] warps=[..]>"
/// (BlockedLayout::str(); " per_warp=[..]" before " warps=" where given),
/// layouts "#blockedN" with an optional " dims=[..]".
class TextReader {
public:
  /// `fail` is called with what is wrong; it must throw.
  TextReader(const std::string &text,
             std::function<void(const std::string &)> fail)
      : text_(text), fail_(std::move(fail)) {}

  BlockedLayout parent() {
    BlockedLayout p;
    expect("blocked<shape=");
    p.shape = list();
    expect(" per_thread=");
    p.size_per_thread = list();
    expect(" threads=");
    p.threads_per_warp = list();
    if (skip(" per_warp=")) {
      p.per_warp = list();
      if (std::all_of(p.per_warp.begin(), p.per_warp.end(),
                      [](int64_t n) { return n == 1; }))
        p.per_warp.clear(); // the form without it
    }
    expect(" warps=");
    p.warps_per_cta = list();
    expect(">");
    end();
    size_t rank = p.shape.size();
    if (p.size_per_thread.size() != rank || p.threads_per_warp.size() != rank ||
        p.warps_per_cta.size() != rank ||
        (!p.per_warp.empty() && p.per_warp.size() != rank))
      fail("its lists must all have its rank");
    return p;
  }

  /// A shared layout as SharedLayout::str() spells it.
  SharedLayout shared() {
    SharedLayout l;
    if (text_.compare(0, 8, "swizzled") == 0) {
      l.kind = SharedLayout::Kind::Swizzled;
      expect("swizzled<shape=");
    } else {
      expect("padded<shape=");
    }
    l.shape = list();
    expect(" order=");
    l.order = list();
    if (l.kind == SharedLayout::Kind::Padded) {
      expect(" pad_every=");
      l.pad_every = number();
      expect(" pad=");
      l.pad = number();
    } else {
      expect(" vector=");
      l.swizzle.vector = number();
      expect(" per_phase=");
      l.swizzle.per_phase = number();
      expect(" max_phase=");
      l.swizzle.max_phase = number();
      if (skip(" atom_columns="))
        l.swizzle.atom_columns = number();
    }
    expect(">");
    end();
    if (std::string why = l.problem(); !why.empty())
      fail(why);
    return l;
  }

  /// The number of a shared layout: "#sharedN".
  size_t shared_number() {
    expect("#shared");
    size_t index = static_cast<size_t>(number());
    end();
    return index;
  }

  /// The parent's number and the dims (nullopt: the parent's, in order).
  std::pair<int, std::optional<std::vector<int>>> layout() {
    expect("#blocked");
    int index = static_cast<int>(number());
    if (pos_ == text_.size())
      return {index, std::nullopt};
    expect(" dims=");
    std::vector<int> dims;
    for (int64_t d : list())
      dims.push_back(static_cast<int>(d));
    end();
    return {index, dims};
  }

  [[noreturn]] void fail(const std::string &why) const {
    fail_(why);
    throw Error("internal: a reader's failure returned");
  }

private:
  /// Moves past `word` where the text continues with it.
  bool skip(const std::string &word) {
    if (text_.compare(pos_, word.size(), word) != 0)
      return false;
    pos_ += word.size();
    return true;
  }

  void expect(const std::string &word) {
    if (text_.compare(pos_, word.size(), word) != 0)
      fail("expected '" + word + "' at column " + std::to_string(pos_ + 1));
    pos_ += word.size();
  }

  void end() {
    if (pos_ != text_.size())
      fail("unexpected '" + text_.substr(pos_) + "'");
  }

  int64_t number() {
    size_t start = pos_;
    while (pos_ < text_.size() && pos_ - start < 9 &&
           std::isdigit(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    if (pos_ == start)
      fail("expected a number at column " + std::to_string(pos_ + 1));
    return std::stoll(text_.substr(start, pos_ - start));
  }

  std::vector<int64_t> list() {
    std::vector<int64_t> values;
    expect("[");
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return values;
    }
    while (true) {
      values.push_back(number());
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      expect("]");
      return values;
    }
  }

  const std::string &text_;
  std::function<void(const std::string &)> fail_;
  size_t pos_ = 0;
};

/// The function's layouts named `prefix` and a number (its parents, its
/// shared layouts), by number, each read by `read`.
template <typename T>
std::vector<T> read_numbered(const ir::Function &function,
                             const std::string &prefix, const std::string &kind,
                             const std::function<T(TextReader &)> &read) {
  std::map<int64_t, T> by_number;
  for (const auto &[key, value] : function.attributes()) {
    if (key.rfind(prefix, 0) != 0)
      continue;
    auto fail = [&](const std::string &why) {
      throw Error("GPU IR: function '" + function.name() + "': " + key + ": " +
                  why);
    };
    std::string digits = key.substr(prefix.size());
    if (digits.empty() || digits.size() > 4 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      fail("a " + kind + " layout's name is '" + prefix + "' and its number");
    const auto *text = std::get_if<std::string>(&value);
    if (!text)
      fail("must be a string");
    TextReader reader(*text, fail);
    by_number.emplace(std::stoll(digits), read(reader));
  }
  std::vector<T> layouts;
  for (const auto &[number, layout] : by_number) {
    if (number != static_cast<int64_t>(layouts.size()))
      throw Error("GPU IR: function '" + function.name() + "' has no " +
                  prefix + std::to_string(layouts.size()));
    layouts.push_back(layout);
  }
  return layouts;
}

/// The function's parents, by number.
std::vector<BlockedLayout> read_parents(const ir::Function &function) {
  return read_numbered<BlockedLayout>(
      function, gpu_attr::kParentPrefix, "blocked",
      [](TextReader &reader) { return reader.parent(); });
}

/// The function's shared layouts, by number.
std::vector<SharedLayout> read_shared_layouts(const ir::Function &function) {
  return read_numbered<SharedLayout>(
      function, gpu_attr::kSharedPrefix, "shared",
      [](TextReader &reader) { return reader.shared(); });
}

} // namespace

std::string layout_text(const BlockedLayout &parent, const Layout &layout) {
  std::string s = "#blocked" + std::to_string(layout.parent);
  if (!is_whole(parent, layout))
    s += " dims=" + ints_text(layout.dims);
  return s;
}

bool carries_layouts(const ir::Function &function) {
  bool carried = false;
  for (const auto &attribute : function.attributes())
    carried = carried ||
              attribute.first.rfind(gpu_attr::kParentPrefix, 0) == 0 ||
              attribute.first.rfind(gpu_attr::kSharedPrefix, 0) == 0 ||
              is_layout_key(attribute.first);
  function.walk([&](const ir::Operation &op) {
    for (const auto &attribute : op.attributes())
      carried = carried || is_layout_key(attribute.first);
  });
  return carried;
}

bool carries_explicit_layouts(const ir::Function &function) {
  bool found = false;
  for (const auto &attribute : function.attributes())
    found = found || is_explicit_layout_key(attribute.first);
  function.walk([&](const ir::Operation &op) {
    found = found || op.code() == OpCode::ConvertLayout;
    for (const auto &attribute : op.attributes())
      found = found || is_explicit_layout_key(attribute.first);
  });
  return found;
}

void write_layouts(ir::Function &function, const LayoutAssignment &layouts) {
  for (size_t i = 0; i < layouts.parents().size(); ++i)
    function.attributes()[gpu_attr::kParentPrefix + std::to_string(i)] =
        layouts.parents()[i].str();
  Writer writer(layouts);
  writer.arguments(function);
  function.walk([&](ir::Operation &op) { writer.op(op); });
}

std::unique_ptr<ir::Operation> make_convert_layout(ir::Value *v,
                                                   const std::string &layout,
                                                   const ir::Location &loc) {
  return std::make_unique<ir::Operation>(
      OpCode::ConvertLayout, std::vector<ir::Value *>{v},
      std::vector<ir::Type>{v->type()},
      ir::Attributes{{gpu_attr::kLayout, layout}}, loc);
}

std::string shared_layout_name(ir::Function &function,
                               std::vector<SharedLayout> &known,
                               const SharedLayout &layout) {
  size_t number = 0;
  while (number < known.size() && !(known[number] == layout))
    ++number;
  const std::string name = gpu_attr::kSharedPrefix + std::to_string(number);
  if (number == known.size()) {
    function.attributes()[name] = layout.str();
    known.push_back(layout);
  }
  return "#" + name;
}

// Reading is a member of LayoutAssignment, which it fills: the parents,
// then one walk over the ops, each attribute read against the value it
// describes. In the explicit form a value's one layout is its home, and the
// layout it is needed in where anything uses it; what an op reads its
// operands in is what they carry.
class LayoutAssignment::Reader {
public:
  Reader(LayoutAssignment &layouts, const ir::Function &function)
      : layouts_(layouts), explicit_(carries_explicit_layouts(function)) {
    if (explicit_)
      function.walk([&](const ir::Operation &op) {
        used_.insert(op.operands().begin(), op.operands().end());
      });
    layouts_.parents_ = read_parents(function);
    layouts_.shared_layouts_ = read_shared_layouts(function);
    for (size_t i = 0; i < function.num_arguments(); ++i)
      value(function.attributes(), function_place(function),
            function.argument(i), argument_keys(i));
  }

  void op(const ir::Operation &op) {
    const ir::Attributes &attributes = op.attributes();
    std::string where = op.describe();
    for (size_t k = 0; k < op.num_results(); ++k)
      value(attributes, where, op.result(k), result_keys(op, k));
    for (const ir::Value *argument : region_arguments(op))
      value(attributes, where, argument, argument_keys(argument->index()));
    if (explicit_) {
      operands_as_carried(op);
      return;
    }
    if (op.code() == OpCode::Store && op.operand(1)->type().is_block())
      layouts_.store_layouts_.emplace(
          &op, layout(where, string(attributes, where, gpu_attr::kStoreLayout),
                      op.operand(1)));
    if (op.code() == OpCode::Reduce && op.operand(0)->type().is_block())
      layouts_.reduce_layouts_.emplace(
          &op, layout(where, string(attributes, where, gpu_attr::kReduceLayout),
                      op.operand(0)));
    if (reads_shape_operands(op))
      shape_operands(op);
  }

private:
  /// The explicit form: a store, a reduction and a shape op read their
  /// operands in the layouts those carry.
  void operands_as_carried(const ir::Operation &op) {
    if (op.code() == OpCode::Store && op.operand(1)->type().is_block())
      layouts_.store_layouts_.emplace(&op, carried(op, 1));
    if (op.code() == OpCode::Reduce && op.operand(0)->type().is_block())
      layouts_.reduce_layouts_.emplace(&op, carried(op, 0));
    if (!reads_shape_operands(op) || layouts_.shared_number(op.result()) >= 0)
      return; // no shape op, or a view of a tile in shared memory
    for (const auto &[result, layout] : shape_keys(op, layouts_)) {
      std::vector<Layout> operands;
      for (size_t i = 0; i < op.num_operands(); ++i)
        operands.push_back(op.operand(i)->type().is_block() ? carried(op, i)
                                                            : Layout{});
      layouts_.shape_operands_.emplace(std::make_tuple(&op, result, layout),
                                       operands);
    }
  }

  /// The one layout operand `i` of `op` carries.
  const Layout &carried(const ir::Operation &op, size_t i) const {
    const Layout *layout = layouts_.home(op.operand(i));
    if (int shared = layouts_.shared_number(op.operand(i)); shared >= 0)
      invalid(op, "operand " + std::to_string(i) + " is in shared memory (#" +
                      gpu_attr::kSharedPrefix + std::to_string(shared) +
                      "), which only a convert_layout reads");
    if (!layout)
      invalid(op, "operand " + std::to_string(i) + " has no layout");
    return *layout;
  }

  void value(const ir::Attributes &attributes, const std::string &where,
             const ir::Value *v, const ValueKeys &keys) {
    if (explicit_) {
      if (attributes.count(keys.home) || attributes.count(keys.layouts))
        invalid(where, keys.home + " and " + keys.layouts +
                           " belong to the implicit form, which the "
                           "explicit form's layouts do not mix with");
      if (!attributes.count(keys.layout))
        return;
      const std::string &text = string(attributes, where, keys.layout);
      if (text.rfind(std::string("#") + gpu_attr::kSharedPrefix, 0) == 0) {
        layouts_.shared_values_[v] = shared(where, text, v);
        return;
      }
      Layout l = layout(where, text, v);
      layouts_.homes_.emplace(v, l);
      if (used_.count(v))
        layouts_.layouts_[v] = {l};
      return;
    }
    if (attributes.count(keys.home))
      layouts_.homes_.emplace(
          v, layout(where, string(attributes, where, keys.home), v));
    if (!attributes.count(keys.layouts))
      return;
    std::vector<Layout> &needed = layouts_.layouts_[v];
    for (const std::string &text :
         split(string(attributes, where, keys.layouts), "; "))
      needed.push_back(layout(where, text, v));
  }

  void shape_operands(const ir::Operation &op) {
    std::vector<std::pair<size_t, Layout>> keys = shape_keys(op, layouts_);
    if (keys.empty())
      return;
    std::string where = op.describe();
    std::vector<std::string> groups =
        split(string(op.attributes(), where, gpu_attr::kOperandLayouts), " | ");
    if (groups.size() != keys.size())
      invalid(op, "operand_layouts has " + std::to_string(groups.size()) +
                      " groups for " + std::to_string(keys.size()) +
                      " layouts of its results");
    for (size_t g = 0; g < groups.size(); ++g) {
      std::vector<std::string> texts = split(groups[g], "; ");
      if (texts.size() != op.num_operands())
        invalid(op, "operand_layouts must give each of its " +
                        std::to_string(op.num_operands()) +
                        " operands a layout");
      std::vector<Layout> operands;
      for (size_t i = 0; i < texts.size(); ++i)
        operands.push_back(layout(where, texts[i], op.operand(i)));
      layouts_.shape_operands_.emplace(
          std::make_tuple(&op, keys[g].first, keys[g].second), operands);
    }
  }

  static const std::string &string(const ir::Attributes &attributes,
                                   const std::string &where,
                                   const std::string &key) {
    auto it = attributes.find(key);
    if (it == attributes.end())
      invalid(where, "has no " + key);
    const auto *text = std::get_if<std::string>(&it->second);
    if (!text)
      invalid(where, key + " must be a string");
    return *text;
  }

  /// The number of the shared layout `text` ("#sharedN") names, which
  /// must have `v`'s shape.
  size_t shared(const std::string &where, const std::string &text,
                const ir::Value *v) {
    TextReader reader(text, [&](const std::string &why) {
      invalid(where, "layout \"" + text + "\": " + why);
    });
    size_t index = reader.shared_number();
    if (index >= layouts_.shared_layouts_.size())
      reader.fail("the function has no shared" + std::to_string(index));
    const SharedLayout &shared = layouts_.shared_layouts_[index];
    if (shared.shape != v->type().shape())
      reader.fail("does not fit a value of type " + v->type().str() +
                  " (its shape is " + ints_text(shared.shape) + ")");
    return index;
  }

  /// The layout `text` spells, of `v`'s shape.
  Layout layout(const std::string &where, const std::string &text,
                const ir::Value *v) {
    TextReader reader(text, [&](const std::string &why) {
      invalid(where, "layout \"" + text + "\": " + why);
    });
    auto [index, dims] = reader.layout();
    if (static_cast<size_t>(index) >= layouts_.parents_.size())
      reader.fail("the function has no blocked" + std::to_string(index));
    const BlockedLayout &parent = layouts_.parents_[index];
    Layout l{index, {}, v->type().shape()};
    if (dims) {
      l.dims = *dims;
    } else {
      for (int d = 0; d < parent.rank(); ++d)
        l.dims.push_back(d);
    }
    check_fits(reader, parent, l, v);
    return l;
  }

  /// A value's dimension k lies along parent dimension dims[k], where it
  /// has the parent's extent, or 1 (a value about to be broadcast).
  static void check_fits(const TextReader &reader, const BlockedLayout &parent,
                         const Layout &l, const ir::Value *v) {
    if (l.dims.size() != l.shape.size())
      reader.fail("has " + std::to_string(l.dims.size()) +
                  " dimensions for a value of type " + v->type().str());
    for (size_t k = 0; k < l.dims.size(); ++k) {
      int d = l.dims[k];
      if (d < 0 || d >= parent.rank())
        reader.fail("its parent has no dimension " + std::to_string(d));
      if (l.shape[k] != 1 && l.shape[k] != parent.shape[d])
        reader.fail("does not fit a value of type " + v->type().str() +
                    " (dimension " + std::to_string(k) + " is " +
                    std::to_string(l.shape[k]) + " long, the parent's " +
                    std::to_string(parent.shape[d]) + ")");
    }
  }

  LayoutAssignment &layouts_;
  const bool explicit_;
  std::set<const ir::Value *> used_; // the explicit form's used values
};

std::unique_ptr<LayoutAssignment>
LayoutAssignment::read(const ir::Function &function, int num_warps,
                       const GpuArch &arch) {
  std::unique_ptr<LayoutAssignment> layouts(
      new LayoutAssignment(num_warps, arch));
  Reader reader(*layouts, function);
  function.walk([&](const ir::Operation &op) { reader.op(op); });
  return layouts;
}

std::unique_ptr<LayoutAssignment>
LayoutAssignment::of(const ir::Function &function,
                     const ir::AxisInfoAnalysis &axis_info, int num_warps,
                     const GpuArch &arch) {
  if (carries_layouts(function))
    return read(function, num_warps, arch);
  return std::make_unique<LayoutAssignment>(function, axis_info, num_warps,
                                            arch);
}

} // namespace blocc::nvptx
