#include "ir/parser.h"

#include "ir/builder.h"
#include "ir/error.h"
#include "ir/printer.h"

#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <set>
#include <unordered_map>

namespace blocc::ir {

namespace {

using namespace syntax;

enum class TokenKind {
  End,
  Identifier, // func, add, loc, inf, nan, attribute keys
  Value,      // %name or %name#index; text keeps the '%'
  Symbol,     // @name or @"name"; text is the decoded name
  Number,     // 12, -3, 2.5, 1e-07, -inf, 0x7ff0...
  String,     // "..."; text is the decoded contents
  Punct,      // one of ( ) { } [ ] , : = ^
  Bad,        // text is the message, thrown when the token is consumed
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  size_t offset = 0;

  bool is(char punct) const {
    return kind == TokenKind::Punct && text.size() == 1 && text[0] == punct;
  }
  bool is_word(std::string_view w) const {
    return kind == TokenKind::Identifier && text == w;
  }
};

/// Splits the text into tokens on demand. Types are not tokens: their
/// grammar (tensor<128xf32>) belongs to ir::parse_type, so the parser asks
/// for the raw text of one type with take_type_text().
class Lexer {
public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    if (lookahead_.empty())
      return lex(pos_);
    Token t = std::move(lookahead_.front().first);
    pos_ = lookahead_.front().second;
    lookahead_.pop_front();
    return t;
  }
  /// The token `ahead` tokens past the cursor. Peeked tokens are kept, since
  /// the parser looks up to four tokens ahead at every operation.
  const Token &peek(size_t ahead = 0) {
    size_t p = lookahead_.empty() ? pos_ : lookahead_.back().second;
    while (lookahead_.size() <= ahead) {
      Token t = lex(p);
      lookahead_.emplace_back(std::move(t), p);
    }
    return lookahead_[ahead].first;
  }

  /// The text of one type at the cursor: a word, then anything up to the
  /// '>' matching its first '<'.
  std::pair<std::string_view, size_t> take_type_text() {
    lookahead_.clear(); // tokens past pos_ were lexed as if no type came
    skip_trivia(pos_);
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_'))
      ++pos_;
    if (pos_ > start && pos_ < text_.size() && text_[pos_] == '<') {
      int depth = 0;
      while (pos_ < text_.size()) {
        char c = text_[pos_++];
        if (c == '<')
          ++depth;
        else if (c == '>' && --depth == 0)
          break;
        else if (c == '\n' || c == '{' || c == '}' || c == '=')
          break; // an unclosed '<': stop before running into the next op
      }
    }
    return {text_.substr(start, pos_ - start), start};
  }

  /// "line:col" (1-based) of a byte offset.
  std::string where(size_t offset) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return std::to_string(line) + ":" + std::to_string(col);
  }

private:
  void skip_trivia(size_t &p) const {
    while (p < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(text_[p]))) {
        ++p;
      } else if (text_.substr(p, 2) == "//") {
        while (p < text_.size() && text_[p] != '\n')
          ++p;
      } else {
        break;
      }
    }
  }

  Token lex(size_t &p) const {
    skip_trivia(p);
    Token t;
    t.offset = p;
    if (p >= text_.size())
      return t;
    char c = text_[p];
    auto bad = [&](std::string message) {
      t.kind = TokenKind::Bad;
      t.text = std::move(message);
      ++p;
      return t;
    };
    if (c == '%') {
      size_t start = p++;
      while (p < text_.size() && is_name_char(text_[p]))
        ++p;
      if (p == start + 1)
        return bad("expected a value name after '%'");
      if (p < text_.size() && text_[p] == '#') {
        ++p;
        size_t digits = p;
        while (p < text_.size() &&
               std::isdigit(static_cast<unsigned char>(text_[p])))
          ++p;
        if (p == digits)
          return bad("expected a result index after '#'");
      }
      t.kind = TokenKind::Value;
      t.text = std::string(text_.substr(start, p - start));
      return t;
    }
    if (c == '@') {
      ++p;
      if (p < text_.size() && text_[p] == '"') {
        Token s = lex_string(p);
        if (s.kind == TokenKind::Bad)
          return s;
        s.kind = TokenKind::Symbol;
        s.offset = t.offset;
        return s;
      }
      size_t start = p;
      while (p < text_.size() && is_name_char(text_[p]))
        ++p;
      if (p == start)
        return bad("expected a function name after '@'");
      t.kind = TokenKind::Symbol;
      t.text = std::string(text_.substr(start, p - start));
      return t;
    }
    if (c == '"')
      return lex_string(p);
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && p + 1 < text_.size() &&
         (std::isdigit(static_cast<unsigned char>(text_[p + 1])) ||
          text_.substr(p + 1, 3) == "inf"))) {
      size_t start = p++;
      while (p < text_.size()) {
        char d = text_[p];
        bool exponent_sign = (d == '+' || d == '-') &&
                             (text_[p - 1] == 'e' || text_[p - 1] == 'E') &&
                             text_.substr(start, 2) != "0x";
        if (!std::isalnum(static_cast<unsigned char>(d)) && d != '.' &&
            !exponent_sign)
          break;
        ++p;
      }
      t.kind = TokenKind::Number;
      t.text = std::string(text_.substr(start, p - start));
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = p;
      while (p < text_.size() && is_name_char(text_[p]))
        ++p;
      t.kind = TokenKind::Identifier;
      t.text = std::string(text_.substr(start, p - start));
      return t;
    }
    if (std::string_view("(){}[],:=^").find(c) != std::string_view::npos) {
      ++p;
      t.kind = TokenKind::Punct;
      t.text = std::string(1, c);
      return t;
    }
    return bad(std::string("unexpected character '") + c + "'");
  }

  Token lex_string(size_t &p) const {
    Token t;
    t.offset = p;
    t.kind = TokenKind::String;
    auto fail = [&](const std::string &message) {
      t.kind = TokenKind::Bad;
      t.text = message;
      return t;
    };
    ++p; // the opening quote
    while (true) {
      if (p >= text_.size() || text_[p] == '\n')
        return fail("unterminated string");
      char c = text_[p++];
      if (c == '"')
        return t;
      if (c != '\\') {
        t.text += c;
        continue;
      }
      if (p >= text_.size())
        return fail("unterminated string");
      char e = text_[p++];
      switch (e) {
      case '"':
      case '\\':
        t.text += e;
        break;
      case 'n':
        t.text += '\n';
        break;
      case 't':
        t.text += '\t';
        break;
      case 'x': {
        unsigned value = 0;
        auto [end, ec] = std::from_chars(
            text_.data() + p, text_.data() + std::min(p + 2, text_.size()),
            value, 16);
        if (ec != std::errc() || end != text_.data() + p + 2)
          return fail("expected two hex digits after \\x");
        p += 2;
        t.text += static_cast<char>(value);
        break;
      }
      default:
        return fail(std::string("unknown escape '\\") + e + "' in string");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  /// Peeked tokens with the offset just past each.
  std::deque<std::pair<Token, size_t>> lookahead_;
};

/// What a name stands for: one value, or all results of one op.
struct Definition {
  std::vector<Value *> values;
};

class Parser {
public:
  explicit Parser(std::string_view text) : lex_(text) {}

  std::vector<std::unique_ptr<Function>> module() {
    std::vector<std::unique_ptr<Function>> functions;
    while (lex_.peek().kind != TokenKind::End)
      functions.push_back(function());
    return functions;
  }

  std::unique_ptr<Function> single_function() {
    if (lex_.peek().kind == TokenKind::End)
      fail(lex_.peek(), "expected a function ('func @name(...) {...}'), got "
                        "end of input");
    auto f = function();
    if (lex_.peek().kind != TokenKind::End)
      fail(lex_.peek(), "expected exactly one function, but more text "
                        "follows (parse_module reads several)");
    return f;
  }

private:
  // --- errors and tokens ---------------------------------------------------

  [[noreturn]] void fail(size_t offset, const std::string &message) const {
    throw Error(lex_.where(offset) + ": " + message);
  }
  [[noreturn]] void fail(const Token &t, const std::string &message) const {
    fail(t.offset, message);
  }

  static std::string describe(const Token &t) {
    switch (t.kind) {
    case TokenKind::End:
      return "end of input";
    case TokenKind::String:
      return "a string";
    case TokenKind::Symbol:
      return "'@" + t.text + "'";
    default:
      return "'" + t.text + "'";
    }
  }

  Token next() {
    Token t = lex_.next();
    if (t.kind == TokenKind::Bad)
      fail(t, t.text);
    return t;
  }

  Token expect(char punct, const std::string &context) {
    Token t = next();
    if (!t.is(punct))
      fail(t, std::string("expected '") + punct + "' " + context + ", got " +
                  describe(t));
    return t;
  }

  Token expect_kind(TokenKind kind, const std::string &what) {
    Token t = next();
    if (t.kind != kind)
      fail(t, "expected " + what + ", got " + describe(t));
    return t;
  }

  int64_t integer(const Token &t, const std::string &what) {
    if (t.kind != TokenKind::Number)
      fail(t, "expected " + what + ", got " + describe(t));
    int64_t v = 0;
    const char *end = t.text.data() + t.text.size();
    auto [stop, ec] = std::from_chars(t.text.data(), end, v);
    if (ec == std::errc::result_out_of_range)
      fail(t, "integer " + t.text + " does not fit in 64 bits");
    if (ec != std::errc() || stop != end)
      fail(t, "expected " + what + ", got " + describe(t));
    return v;
  }

  Type type() {
    auto [text, offset] = lex_.take_type_text();
    if (text.empty())
      fail(offset, "expected a type, got " + describe(lex_.peek()));
    auto t = parse_type(text);
    if (!t)
      fail(offset, "bad type '" + std::string(text) +
                       "'; expected e.g. i32, ptr<f16>, ptr<f32, 3>, "
                       "tensor<64x32xf32>");
    return *t;
  }

  // --- names ---------------------------------------------------------------

  /// Names are unique in a function and visible from their definition to
  /// the end of the enclosing region, like the values they stand for.
  void define(const Token &name, std::vector<Value *> values) {
    if (defined_.count(name.text))
      fail(name, "redefinition of " + name.text);
    defined_.insert(name.text);
    visible_[name.text] = Definition{std::move(values)};
    scopes_.back().push_back(name.text);
  }

  void open_scope() { scopes_.emplace_back(); }
  void close_scope() {
    for (const std::string &name : scopes_.back())
      visible_.erase(name);
    scopes_.pop_back();
  }

  Value *use(const Token &t) {
    std::string base = t.text;
    std::optional<int64_t> index;
    if (auto hash = base.find('#'); hash != std::string::npos) {
      int64_t i = 0;
      auto [stop, ec] =
          std::from_chars(base.data() + hash + 1, base.data() + base.size(), i);
      if (ec != std::errc())
        fail(t, "bad result index in " + t.text);
      index = i;
      base.resize(hash);
    }
    auto it = visible_.find(base);
    if (it == visible_.end()) {
      if (defined_.count(base))
        fail(t, base + " is defined inside a region that does not enclose "
                       "this use");
      fail(t, "use of undefined value " + base +
                  " (values must be defined before they are used)");
    }
    const auto &values = it->second.values;
    if (!index) {
      if (values.size() != 1)
        fail(t, base + " names " + std::to_string(values.size()) +
                    " results; expected one of " + base + "#0 to " + base +
                    "#" + std::to_string(values.size() - 1));
      return values[0];
    }
    if (*index >= static_cast<int64_t>(values.size()))
      fail(t, t.text + " is out of range: " + base + " has " +
                  std::to_string(values.size()) + " result" +
                  (values.size() == 1 ? "" : "s"));
    return values[static_cast<size_t>(*index)];
  }

  // --- functions -----------------------------------------------------------

  std::unique_ptr<Function> function() {
    Token kw = next();
    if (!kw.is_word("func"))
      fail(kw, "expected 'func', got " + describe(kw));
    Token name = expect_kind(TokenKind::Symbol, "a function name (@name)");
    auto f = std::make_unique<Function>(name.text);
    defined_.clear();
    visible_.clear();
    scopes_.clear();
    open_scope();

    expect('(', "to open the argument list");
    if (!lex_.peek().is(')')) {
      do {
        argument(*f);
      } while (lex_.peek().is(',') && (next(), true));
    }
    expect(')', "to close the argument list");
    if (lex_.peek().is_word("attributes")) {
      next();
      if (!lex_.peek().is('{'))
        fail(lex_.peek(), "expected '{' after 'attributes'");
      f->attributes() = attribute_dict();
    }

    Token open = expect('{', "to open the function body");
    if (lex_.peek().is('^'))
      fail(lex_.peek(), "the function body takes no '^(...)' header; its "
                        "arguments are in the signature");
    Builder b(&f->body());
    while (!lex_.peek().is('}')) {
      if (lex_.peek().kind == TokenKind::End)
        fail(open, "unclosed function body");
      operation(b);
    }
    next();
    close_scope();
    return f;
  }

  void argument(Function &f) {
    Token name = expect_kind(TokenKind::Value, "an argument name (%name)");
    if (name.text.find('#') != std::string::npos)
      fail(name, "an argument name cannot carry a '#' result index");
    expect(':', "after the argument name");
    Type t = type();
    ArgumentInfo info;
    std::string bare = name.text.substr(1);
    bool numeric = std::isdigit(static_cast<unsigned char>(bare[0]));
    if (!numeric && !is_reserved_argument_name(bare))
      info.name = bare;
    if (lex_.peek().is('{')) {
      next();
      do {
        Token key = expect_kind(TokenKind::Identifier, "an argument attribute");
        if (key.text != "divisibility")
          fail(key, "unknown argument attribute '" + key.text +
                        "'; expected divisibility");
        expect('=', "after '" + key.text + "'");
        info.divisibility = integer(next(), "an integer divisibility");
      } while (lex_.peek().is(',') && (next(), true));
      expect('}', "to close the argument attributes");
    }
    define(name, {f.add_argument(t, info)});
  }

  // --- operations ----------------------------------------------------------

  /// True at "%x =" or "%x:2 =": the start of an op, not an operand.
  bool at_definition() {
    if (lex_.peek().kind != TokenKind::Value)
      return false;
    Token second = lex_.peek(1);
    if (second.is('='))
      return true;
    return second.is(':') && lex_.peek(2).kind == TokenKind::Number &&
           lex_.peek(3).is('=');
  }

  /// "{key =" or "{"key" =" opens attributes; any other '{' a region.
  bool at_attributes() {
    if (!lex_.peek().is('{'))
      return false;
    Token key = lex_.peek(1);
    return (key.kind == TokenKind::Identifier ||
            key.kind == TokenKind::String) &&
           lex_.peek(2).is('=');
  }

  void operation(Builder &b) {
    std::optional<Token> result_name;
    int64_t num_results = 0;
    if (at_definition()) {
      result_name = next();
      if (result_name->text.find('#') != std::string::npos)
        fail(*result_name,
             "a result name cannot carry a '#' index; write " +
                 result_name->text.substr(0, result_name->text.find('#')) +
                 ":N to define N results");
      num_results = 1;
      if (lex_.peek().is(':')) {
        next();
        Token count = next();
        num_results = integer(count, "a result count");
        if (num_results < 1)
          fail(count, "a result count must be at least 1");
      }
      expect('=', "after the result names");
    }

    Token name = next();
    if (name.kind != TokenKind::Identifier)
      fail(name, "expected an operation name, got " + describe(name));
    auto code = opcode_from_name(name.text);
    if (!code)
      fail(name, "unknown op '" + name.text + "'");

    std::vector<Value *> operands;
    if (lex_.peek().kind == TokenKind::Value && !at_definition()) {
      operands.push_back(use(next()));
      while (lex_.peek().is(',')) {
        next();
        operands.push_back(use(expect_kind(TokenKind::Value, "an operand")));
      }
    }

    Attributes attributes;
    if (at_attributes())
      attributes = attribute_dict();

    std::vector<Type> types;
    if (lex_.peek().is(':')) {
      Token colon = next();
      if (num_results == 0)
        fail(colon, "'" + name.text +
                        "' defines no results, so it takes no "
                        "result types; write %r = " +
                        name.text + " ... : type");
      types.push_back(type());
      while (lex_.peek().is(',')) {
        Token comma = next();
        if (static_cast<int64_t>(types.size()) == num_results)
          fail(comma, "wrong count: more than " + std::to_string(num_results) +
                          " result type" + (num_results == 1 ? "" : "s") +
                          " for " + result_name->text + ":" +
                          std::to_string(num_results));
        types.push_back(type());
      }
    }
    if (static_cast<int64_t>(types.size()) != num_results)
      fail(name, "wrong count: '" + name.text + "' defines " +
                     std::to_string(num_results) + " result" +
                     (num_results == 1 ? "" : "s") + " but has " +
                     std::to_string(types.size()) + " result type" +
                     (types.size() == 1 ? "" : "s") +
                     "; expected one type per result after ':'");

    Operation *op =
        b.create(*code, std::move(operands), types, std::move(attributes));
    while (lex_.peek().is('{'))
      region(*op);
    if (lex_.peek().is_word("loc"))
      op->set_loc(location());
    // Results become visible after the regions: an op's regions cannot
    // use the op's own results.
    if (result_name)
      define(*result_name, op->results());
  }

  void region(Operation &op) {
    Token open = next();
    // Deeper nesting than any kernel has: refuse it before the recursion
    // runs out of stack on malicious or corrupted input.
    constexpr size_t kMaxNesting = 200;
    if (scopes_.size() > kMaxNesting)
      fail(open,
           "regions nested more than " + std::to_string(kMaxNesting) + " deep");
    Block *block = op.add_region();
    open_scope();
    if (lex_.peek().is('^')) {
      next();
      expect('(', "after '^' to open the region arguments");
      if (!lex_.peek().is(')')) {
        do {
          Token name = expect_kind(TokenKind::Value, "a region argument name");
          if (name.text.find('#') != std::string::npos)
            fail(name, "a region argument name cannot carry a '#' index");
          expect(':', "after the region argument name");
          define(name, {block->add_argument(type())});
        } while (lex_.peek().is(',') && (next(), true));
      }
      expect(')', "to close the region arguments");
      expect(':', "after the region arguments");
    }
    Builder b(block);
    while (!lex_.peek().is('}')) {
      if (lex_.peek().kind == TokenKind::End)
        fail(open, "unclosed region of '" + std::string(op.name()) + "'");
      if (lex_.peek().is('^'))
        fail(lex_.peek(), "region arguments '^(...)' must come first in the "
                          "region");
      operation(b);
    }
    next();
    close_scope();
  }

  Location location() {
    next(); // "loc"
    expect('(', "after 'loc'");
    Token file = expect_kind(TokenKind::String, "a quoted file name");
    expect(':', "between the file and the line");
    Token line = next();
    int64_t n = integer(line, "a line number");
    if (n < 0 || n > std::numeric_limits<int>::max())
      fail(line, "line number " + line.text + " is out of range");
    expect(')', "to close loc(...)");
    if (file.text.empty())
      fail(file, "a location needs a file name");
    // Only base names are printed; keep them the same when read back.
    return Location{base_name(file.text), static_cast<int>(n)};
  }

  // --- attributes ----------------------------------------------------------

  Attributes attribute_dict() {
    next(); // '{'
    Attributes attributes;
    do {
      Token key = next();
      if (key.kind != TokenKind::Identifier && key.kind != TokenKind::String)
        fail(key, "expected an attribute name, got " + describe(key));
      expect('=', "after attribute '" + key.text + "'");
      Attribute value = attribute_value();
      if (!attributes.emplace(key.text, std::move(value)).second)
        fail(key, "duplicate attribute '" + key.text + "'");
    } while (lex_.peek().is(',') && (next(), true));
    expect('}', "to close the attributes");
    return attributes;
  }

  Attribute attribute_value() {
    Token t = next();
    if (t.kind == TokenKind::String)
      return t.text;
    if (t.is('[')) {
      std::vector<int64_t> list;
      if (!lex_.peek().is(']')) {
        do {
          list.push_back(integer(next(), "an integer in the list"));
        } while (lex_.peek().is(',') && (next(), true));
      }
      expect(']', "to close the integer list");
      return list;
    }
    if (t.is_word("inf"))
      return std::numeric_limits<double>::infinity();
    if (t.is_word("nan"))
      return nan_payload();
    if (t.kind != TokenKind::Number)
      fail(t, "expected an attribute value (integer, float, string or "
              "[integers]), got " +
                  describe(t));
    if (t.text == "-inf")
      return -std::numeric_limits<double>::infinity();
    bool is_float = t.text.find_first_of(".eE") != std::string::npos &&
                    t.text.find("0x") == std::string::npos;
    if (!is_float)
      return integer(t, "an integer");
    double d = 0;
    const char *end = t.text.data() + t.text.size();
    auto [stop, ec] = std::from_chars(t.text.data(), end, d);
    if (ec == std::errc::result_out_of_range)
      fail(t, "float " + t.text + " is out of the range of f64");
    if (ec != std::errc() || stop != end)
      fail(t, "bad number '" + t.text + "'");
    return d;
  }

  /// "nan" or "nan(0x7ff4000000000000)": NaNs keep their bits.
  double nan_payload() {
    if (!lex_.peek().is('('))
      return std::bit_cast<double>(kCanonicalNaNBits);
    next();
    Token bits = next();
    uint64_t v = 0;
    const char *begin = bits.text.data(), *end = begin + bits.text.size();
    bool ok = bits.kind == TokenKind::Number && bits.text.size() > 2 &&
              bits.text.substr(0, 2) == "0x";
    if (ok) {
      auto [stop, ec] = std::from_chars(begin + 2, end, v, 16);
      ok = ec == std::errc() && stop == end;
    }
    if (!ok || !std::isnan(std::bit_cast<double>(v)))
      fail(bits, "expected the 64-bit pattern of a NaN (nan(0x7ff...)), got " +
                     describe(bits));
    expect(')', "to close nan(...)");
    return std::bit_cast<double>(v);
  }

  Lexer lex_;
  std::set<std::string> defined_;
  std::unordered_map<std::string, Definition> visible_;
  std::vector<std::vector<std::string>> scopes_;
};

} // namespace

std::unique_ptr<Function> parse_function(std::string_view text) {
  return Parser(text).single_function();
}

std::vector<std::unique_ptr<Function>> parse_module(std::string_view text) {
  return Parser(text).module();
}

} // namespace blocc::ir
