#include "backends/nvptx/ptx_min_max_as_selects.h"

#include <optional>
#include <string_view>

namespace blocc::nvptx {

namespace {

/// An integer "min.s32 d, a, b;" at the start of a line of code, and how
/// many characters it takes (through the semicolon).
struct MinMax {
  bool is_max = false, is_signed = false;
  unsigned bits = 0;
  std::string d, a, b;
  size_t length = 0;
};

std::string trimmed(std::string_view s) {
  size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return "";
  size_t last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

std::optional<MinMax> parse_min_max(std::string_view code) {
  if (code.size() < 8 ||
      (code.substr(0, 4) != "min." && code.substr(0, 4) != "max."))
    return std::nullopt;
  MinMax m;
  m.is_max = code[1] == 'a';
  if (code[4] != 's' && code[4] != 'u')
    return std::nullopt;
  m.is_signed = code[4] == 's';
  std::string_view width = code.substr(5, 2);
  if (width != "16" && width != "32" && width != "64")
    return std::nullopt;
  m.bits = width == "16" ? 16 : width == "32" ? 32 : 64;
  if (code[7] != ' ' && code[7] != '\t') // min.s16x2 and the like stay
    return std::nullopt;
  size_t semicolon = code.find(';');
  if (semicolon == std::string_view::npos)
    return std::nullopt;
  std::string_view operands = code.substr(8, semicolon - 8);
  size_t first = operands.find(','), second = operands.find(',', first + 1);
  if (first == std::string_view::npos || second == std::string_view::npos ||
      operands.find(',', second + 1) != std::string_view::npos)
    return std::nullopt;
  m.d = trimmed(operands.substr(0, first));
  m.a = trimmed(operands.substr(first + 1, second - first - 1));
  m.b = trimmed(operands.substr(second + 1));
  if (m.d.empty() || m.d[0] != '%' || m.a.empty() || m.b.empty())
    return std::nullopt;
  m.length = semicolon + 1;
  return m;
}

} // namespace

std::string min_max_as_select(bool is_max, bool is_signed, unsigned bits,
                              const std::string &d, const std::string &a,
                              const std::string &b) {
  std::string width = std::to_string(bits);
  return "{ .reg .pred %p; setp." + std::string(is_max ? "gt" : "lt") + "." +
         (is_signed ? "s" : "u") + width + " %p, " + a + ", " + b + "; selp.b" +
         width + " " + d + ", " + a + ", " + b + ", %p; }";
}

std::string rewrite_ptx_min_max_as_selects(const std::string &ptx) {
  // A scan line by line: this runs on every kernel's PTX, megabytes for
  // large tiles, where std::regex costs tens of milliseconds.
  std::string out;
  out.reserve(ptx.size());
  size_t start = 0;
  while (start < ptx.size()) {
    size_t end = ptx.find('\n', start);
    end = end == std::string::npos ? ptx.size() : end + 1;
    std::string_view line(ptx.data() + start, end - start);
    size_t code = line.find_first_not_of(" \t");
    std::optional<MinMax> m = code == std::string_view::npos
                                  ? std::nullopt
                                  : parse_min_max(line.substr(code));
    if (m)
      out.append(line.substr(0, code))
          .append(min_max_as_select(m->is_max, m->is_signed, m->bits, m->d,
                                    m->a, m->b))
          .append(line.substr(code + m->length));
    else
      out.append(line);
    start = end;
  }
  return out;
}

} // namespace blocc::nvptx
