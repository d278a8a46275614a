#include "tools/compile/cpp_names.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace blocc::compile {

namespace {

constexpr std::string_view kKeywords[] = {
    "alignas",       "alignof",     "and",
    "and_eq",        "asm",         "auto",
    "bitand",        "bitor",       "bool",
    "break",         "case",        "catch",
    "char",          "char8_t",     "char16_t",
    "char32_t",      "class",       "compl",
    "concept",       "const",       "consteval",
    "constexpr",     "constinit",   "const_cast",
    "continue",      "co_await",    "co_return",
    "co_yield",      "decltype",    "default",
    "delete",        "do",          "double",
    "dynamic_cast",  "else",        "enum",
    "explicit",      "export",      "extern",
    "false",         "float",       "for",
    "friend",        "goto",        "if",
    "inline",        "int",         "long",
    "mutable",       "namespace",   "new",
    "noexcept",      "not",         "not_eq",
    "nullptr",       "operator",    "or",
    "or_eq",         "private",     "protected",
    "public",        "register",    "reinterpret_cast",
    "requires",      "return",      "short",
    "signed",        "sizeof",      "static",
    "static_assert", "static_cast", "struct",
    "switch",        "template",    "this",
    "thread_local",  "throw",       "true",
    "try",           "typedef",     "typeid",
    "typename",      "union",       "unsigned",
    "using",         "virtual",     "void",
    "volatile",      "wchar_t",     "while",
    "xor",           "xor_eq",      "final",
    "override",      "import",      "module",
    "NULL",
};

} // namespace

bool is_usable_identifier(std::string_view name) {
  if (name.empty() ||
      !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  if (name.find("__") != std::string_view::npos ||
      (name[0] == '_' && name.size() > 1 &&
       std::isupper(static_cast<unsigned char>(name[1]))))
    return false;
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) ==
         std::end(kKeywords);
}

bool is_usable_namespace(std::string_view name) {
  while (true) {
    size_t end = name.find("::");
    if (!is_usable_identifier(name.substr(0, end)))
      return false;
    if (end == std::string_view::npos)
      return true;
    name.remove_prefix(end + 2);
  }
}

std::string identifier_from(std::string_view name) {
  std::string s(name);
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '_';
  return s;
}

} // namespace blocc::compile
