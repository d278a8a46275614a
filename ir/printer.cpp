#include "ir/printer.h"

#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace blocc::ir {

namespace syntax {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$';
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) ||
      s[0] == '.' || s[0] == '$')
    return false;
  for (char c : s)
    if (!is_name_char(c))
      return false;
  return true;
}

bool is_reserved_argument_name(std::string_view s) {
  if (s.size() <= 3 || s.substr(0, 3) != "arg")
    return false;
  for (char c : s.substr(3))
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  return true;
}

std::string quote(std::string_view s) {
  static const char digits[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += digits[u >> 4];
      out += digits[u & 15];
    } else {
      out += c; // UTF-8 passes through untouched
    }
  }
  return out + "\"";
}

std::string symbol_text(std::string_view name) {
  return is_identifier(name) ? std::string(name) : quote(name);
}

std::string attribute_key_text(std::string_view key) {
  return is_identifier(key) ? std::string(key) : quote(key);
}

std::string base_name(std::string_view path) {
  auto slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path
                                                     : path.substr(slash + 1));
}

} // namespace syntax

namespace {

using namespace syntax;

std::string print_float(double v) {
  if (std::isnan(v)) {
    uint64_t bits = std::bit_cast<uint64_t>(v);
    if (bits == kCanonicalNaNBits)
      return "nan";
    char hex[32];
    auto [end, ec] = std::to_chars(hex, hex + sizeof hex, bits, 16);
    return "nan(0x" + std::string(hex, end) + ")";
  }
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  // The shortest text that reads back to the same double.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0"; // keep it a float when read back
  return s;
}

/// Names every value of one function (or one detached op tree) in text
/// order, the way the parser expects to read them back.
class Namer {
public:
  void name_function_arguments(const Function &f) {
    for (size_t i = 0; i < f.num_arguments(); ++i) {
      const std::string &wanted = f.argument_info(i).name;
      std::string name = "arg" + std::to_string(i);
      // A reserved %argJ or a repeated name would read back as another
      // argument; fall back to the index then.
      bool usable = is_identifier(wanted) &&
                    (!is_reserved_argument_name(wanted) || wanted == name) &&
                    !used_argument_names_.count(wanted);
      if (usable)
        name = wanted;
      used_argument_names_[name] = true;
      names_[f.argument(i)] = "%" + name;
    }
  }

  void name_anonymous_arguments(const Block &block) {
    for (size_t i = 0; i < block.num_arguments(); ++i)
      names_[block.argument(i)] = "%arg" + std::to_string(i);
  }

  void name_block(const Block &block) {
    for (const auto &op : block.ops())
      name_op(*op);
  }

  void name_op(const Operation &op) {
    // Ops without results take no number, so that deleting a store does
    // not renumber the rest of a golden test.
    if (op.num_results() > 0) {
      std::string base = "%" + std::to_string(next_++);
      if (op.num_results() == 1) {
        names_[op.result(0)] = base;
      } else {
        for (size_t i = 0; i < op.num_results(); ++i)
          names_[op.result(i)] = base + "#" + std::to_string(i);
      }
      definitions_[&op] = base;
    }
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const Block *region = op.region(r);
      for (size_t i = 0; i < region->num_arguments(); ++i)
        names_[region->argument(i)] = "%" + std::to_string(next_++);
      name_block(*region);
    }
  }

  std::string use(const Value *v) const {
    if (!v)
      return "<<null>>";
    auto it = names_.find(v);
    // A value outside the printed function: only broken IR gets here, and
    // the text says so rather than inventing a name that would parse.
    return it == names_.end() ? "<<unknown value>>" : it->second;
  }

  /// "%3" or "%3:2" for an op's results.
  std::string definition(const Operation &op) const {
    auto it = definitions_.find(&op);
    std::string base = it == definitions_.end() ? "<<unknown op>>" : it->second;
    if (op.num_results() != 1)
      base += ":" + std::to_string(op.num_results());
    return base;
  }

private:
  std::unordered_map<const Value *, std::string> names_;
  std::unordered_map<const Operation *, std::string> definitions_;
  std::unordered_map<std::string, bool> used_argument_names_;
  int next_ = 0;
};

class Printer {
public:
  explicit Printer(const Namer &namer, const OpNotes *notes = nullptr)
      : namer_(namer), notes_(notes) {}

  void function(const Function &f) {
    out_ += "func @" + symbol_text(f.name()) + "(";
    for (size_t i = 0; i < f.num_arguments(); ++i) {
      if (i)
        out_ += ", ";
      out_ += namer_.use(f.argument(i)) + ": " + f.argument(i)->type().str();
      if (int64_t d = f.argument_info(i).divisibility; d != 1)
        out_ += " {divisibility = " + std::to_string(d) + "}";
    }
    out_ += ")";
    function_attributes(f);
    out_ += " {\n";
    block_ops(f.body(), 1);
    out_ += "}\n";
  }

  void operation(const Operation &op, int depth) {
    if (op.num_results() > 0)
      out_ += namer_.definition(op) + " = ";
    out_ += op.name();
    for (size_t i = 0; i < op.num_operands(); ++i)
      out_ += (i ? ", " : " ") + namer_.use(op.operand(i));
    if (!op.attributes().empty()) {
      out_ += " {";
      bool first = true;
      for (const auto &[key, value] : op.attributes()) {
        out_ += first ? "" : ", ";
        first = false;
        out_ += attribute_key_text(key) + " = " + print_attribute(value);
      }
      out_ += "}";
    }
    for (size_t i = 0; i < op.num_results(); ++i)
      out_ += (i ? ", " : " : ") + op.result(i)->type().str();
    std::string note = notes_ && *notes_ ? (*notes_)(op) : std::string();
    for (size_t r = 0; r < op.num_regions(); ++r)
      region(*op.region(r), depth, r == 0 ? note : std::string());
    if (op.loc().known())
      out_ += " loc(" + quote(base_name(op.loc().file)) + ":" +
              std::to_string(op.loc().line) + ")";
    if (op.num_regions() == 0)
      comment(note);
  }

  std::string take() { return std::move(out_); }

private:
  /// " attributes {...}", one attribute a line: a function's attributes
  /// are tables (the GPU IR's layouts), read more easily as columns.
  void function_attributes(const Function &f) {
    if (f.attributes().empty())
      return;
    out_ += " attributes {";
    bool first = true;
    for (const auto &[key, value] : f.attributes()) {
      out_ += first ? "\n    " : ",\n    ";
      first = false;
      out_ += attribute_key_text(key) + " = " + print_attribute(value);
    }
    out_ += "}";
  }

private:
  void indent(int depth) { out_.append(2 * static_cast<size_t>(depth), ' '); }

  void block_ops(const Block &block, int depth) {
    for (const auto &op : block.ops()) {
      indent(depth);
      operation(*op, depth);
      out_ += "\n";
    }
  }

  /// "  // note" where there is one; a note of several lines is joined,
  /// since the comment ends at the line's end.
  void comment(const std::string &note) {
    if (note.empty())
      return;
    out_ += "  // ";
    for (char c : note)
      out_ += c == '\n' ? ' ' : c;
  }

  /// The header sits at the op's own depth, like a label, so that the
  /// body lines up one level deeper than the op. `note` ends the line that
  /// opens the region.
  void region(const Block &block, int depth, const std::string &note) {
    out_ += " {";
    comment(note);
    out_ += "\n";
    if (block.num_arguments() > 0) {
      indent(depth);
      out_ += "^(";
      for (size_t i = 0; i < block.num_arguments(); ++i) {
        if (i)
          out_ += ", ";
        out_ += namer_.use(block.argument(i)) + ": " +
                block.argument(i)->type().str();
      }
      out_ += "):\n";
    }
    block_ops(block, depth + 1);
    indent(depth);
    out_ += "}";
  }

  const Namer &namer_;
  const OpNotes *notes_;
  std::string out_;
};

} // namespace

std::string print_attribute(const Attribute &a) {
  if (const auto *i = std::get_if<int64_t>(&a))
    return std::to_string(*i);
  if (const auto *d = std::get_if<double>(&a))
    return print_float(*d);
  if (const auto *s = std::get_if<std::string>(&a))
    return quote(*s);
  const auto &list = std::get<std::vector<int64_t>>(a);
  std::string s = "[";
  for (size_t i = 0; i < list.size(); ++i)
    s += (i ? ", " : "") + std::to_string(list[i]);
  return s + "]";
}

std::string print(const Function &f) { return print(f, OpNotes()); }

std::string print(const Function &f, const OpNotes &notes) {
  Namer namer;
  namer.name_function_arguments(f);
  namer.name_block(f.body());
  Printer printer(namer, &notes);
  printer.function(f);
  return printer.take();
}

std::string print(const Operation &op) {
  // Number the whole tree the op sits in, so that a message's %7 is the
  // %7 of the function dump printed next to it.
  Namer namer;
  const Operation *root_op = &op;
  const Block *root_block = nullptr;
  for (const Block *b = op.parent_block(); b;) {
    const Operation *owner = b->parent_op();
    if (!owner) {
      root_block = b;
      break;
    }
    root_op = owner;
    b = owner->parent_block();
  }
  if (root_block) {
    namer.name_anonymous_arguments(*root_block);
    namer.name_block(*root_block);
  } else {
    namer.name_op(*root_op);
  }
  Printer printer(namer);
  int depth = 0;
  printer.operation(op, depth);
  return printer.take();
}

} // namespace blocc::ir
