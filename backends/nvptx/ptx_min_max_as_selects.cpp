#include "backends/nvptx/ptx_min_max_as_selects.h"

#include <regex>

namespace blocc::nvptx {

std::string min_max_as_select(bool is_max, bool is_signed, unsigned bits,
                              const std::string &d, const std::string &a,
                              const std::string &b) {
  std::string width = std::to_string(bits);
  return "{ .reg .pred %p; setp." + std::string(is_max ? "gt" : "lt") + "." +
         (is_signed ? "s" : "u") + width + " %p, " + a + ", " + b + "; selp.b" +
         width + " " + d + ", " + a + ", " + b + ", %p; }";
}

std::string rewrite_ptx_min_max_as_selects(const std::string &ptx) {
  // "\tmax.s32 \t%r38, %r37, %r19;" (operands: registers or immediates).
  static const std::regex min_max(
      R"(^([ \t]*)(min|max)\.([su])(16|32|64)[ \t]+(%\w+),[ \t]*([^,;]+?),[ \t]*([^,;]+?);)",
      std::regex::multiline);
  std::string out;
  auto last = ptx.cbegin();
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), min_max), end; it != end;
       ++it) {
    const std::smatch &m = *it;
    out.append(last, m[0].first);
    out += m[1].str() + min_max_as_select(m[2] == "max", m[3] == "s",
                                          unsigned(std::stoul(m[4].str())),
                                          m[5], m[6], m[7]);
    last = m[0].second;
  }
  out.append(last, ptx.cend());
  return out;
}

} // namespace blocc::nvptx
