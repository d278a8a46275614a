#include "backends/nvptx/ptx_min_max_as_selects.h"

#include <regex>

namespace blocc::nvptx {

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
    std::string compare = m[2] == "max" ? "gt" : "lt";
    std::string bits = m[4];
    out.append(last, m[0].first);
    out += m[1].str() + "{ .reg .pred %p; setp." + compare + "." + m[3].str() +
           bits + " %p, " + m[6].str() + ", " + m[7].str() + "; selp.b" + bits +
           " " + m[5].str() + ", " + m[6].str() + ", " + m[7].str() + ", %p; }";
    last = m[0].second;
  }
  out.append(last, ptx.cend());
  return out;
}

} // namespace blocc::nvptx
