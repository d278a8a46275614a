// The textual form of the block IR: what BLOCC_DUMP=ir shows, what the
// compile cache hashes, and what blocc-opt reads and writes in golden tests.
// The text is deterministic (same IR, same text) and parses back with
// ir/parser.h into IR that prints identically.
//
// Grammar (`[...]` optional, `...*` repeated; whitespace is free, `//`
// starts a comment that runs to the end of the line):
//
//   function  := "func" "@" name "(" [argument ("," argument)*] ")"
//                ["attributes" "{" attribute ("," attribute)* "}"] region
//   argument  := value ":" type ["{" "divisibility" "=" int "}"]
//   operation := [value [":" count] "="] opname [use ("," use)*]
//                ["{" attribute ("," attribute)* "}"]
//                [":" type ("," type)*]   // exactly one type per result
//                region*
//                ["loc" "(" string ":" int ")"]
//   region    := "{" ["^" "(" [value ":" type ("," value ":" type)*] ")" ":"]
//                operation* "}"
//   use       := value ["#" index]  // "#i": result i of a multi-result op
//   attribute := key "=" attr-value
//   attr-value:= int | float | string | "[" [int ("," int)*] "]"
//   value     := "%" [A-Za-z0-9_.$]+
//   name, key := identifier | string
//
// A '{' followed by `key =` opens the attributes; any other '{' opens a
// region (so `{}` is an empty region; empty attributes are not printed).
// Types are read by ir::parse_type.
//
// Naming: op results and region arguments are numbered %0, %1, ... in text
// order (ops without results take no number); an op with N > 1 results
// defines %k:N and its uses read %k#i. The parser accepts any %word.
// Function arguments print their ArgumentInfo name when it is a valid,
// unique identifier, and %argI (I = the argument's index) otherwise; the
// parser reads %argI and numeric names back as "no name".
//
// Floats always carry a '.', an exponent, or are inf / -inf / nan, so that
// they never read back as integers; finite values use the shortest text that
// reads back to the same double, and NaNs other than the canonical quiet NaN
// print their bit pattern as nan(0x...). Locations print only when known, as
// loc("file.cpp":12) with the file's base name (see Location::str).
#pragma once

#include "ir/function.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace blocc::ir {

/// The whole function, ending with a newline.
std::string print(const Function &f);

/// A note to show beside an operation (the layouts a backend chose for
/// it, say), on one line: "" for none.
using OpNotes = std::function<std::string(const Operation &)>;

/// print(f) with each op's note as a `// ` comment at the end of the op's
/// first line (after the `{` of its first region, for ops with regions).
/// Comments are whitespace to the parser: the text still reads back as
/// the same function.
std::string print(const Function &f, const OpNotes &notes);

/// One operation with its regions (no trailing newline), for messages.
/// Values are numbered as in print() of the function holding the op;
/// function arguments print as %argI since an op cannot see their names.
std::string print(const Operation &op);

/// An attribute value as it appears in the text: 3, 2.5, "s", [1, 0].
std::string print_attribute(const Attribute &a);

/// The lexical rules the printer writes and the parser reads, kept in one
/// place so that the two cannot drift apart.
namespace syntax {

/// [A-Za-z_][A-Za-z0-9_.$]*: printed bare as a value, symbol or key name.
bool is_identifier(std::string_view s);
/// Characters that may follow '%' or '@' in a bare name.
bool is_name_char(char c);
/// "arg" followed by digits: how arguments without a usable name print.
bool is_reserved_argument_name(std::string_view s);
/// A double-quoted string with \" \\ \n \t and \xHH escapes.
std::string quote(std::string_view s);
/// The function name after '@': bare when an identifier, else quoted.
std::string symbol_text(std::string_view name);
/// An attribute key: bare when an identifier, else quoted.
std::string attribute_key_text(std::string_view key);
/// "dir/kernel.cpp" -> "kernel.cpp", as Location::str prints it.
std::string base_name(std::string_view path);
/// The bits of the quiet NaN that prints as plain "nan".
inline constexpr uint64_t kCanonicalNaNBits = 0x7ff8000000000000ULL;

} // namespace syntax

} // namespace blocc::ir
