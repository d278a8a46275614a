// Reads the textual IR that ir/printer.h writes (the grammar is documented
// there) back into Functions, so golden tests and blocc-opt can start from
// text. print(parse_function(print(f))) == print(f) for every function.
//
// The parser checks what only the text can get wrong: tokens, names (every
// use refers to a value defined earlier in an enclosing scope, no name is
// defined twice), types, and the number of result types. Everything about
// what an op means (operand types, attributes, terminators) is the
// verifier's job: call ir::verify on the result.
#pragma once

#include "ir/function.h"

#include <memory>
#include <string_view>
#include <vector>

namespace blocc::ir {

/// Parses text holding exactly one function. Throws blocc::Error with a
/// message that starts with "line:col: ".
std::unique_ptr<Function> parse_function(std::string_view text);

/// Parses text holding any number of functions, in order.
std::vector<std::unique_ptr<Function>> parse_module(std::string_view text);

} // namespace blocc::ir
