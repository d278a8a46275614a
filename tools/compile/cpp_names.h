// C++ names in the code blocc-compile writes: which of the user's names
// (kernel parameters, --name, --namespace) can be used as they are.
#pragma once

#include <string>
#include <string_view>

namespace blocc::compile {

/// [A-Za-z_][A-Za-z0-9_]*, not a C++ keyword, not reserved (no "__", no
/// leading underscore and capital).
bool is_usable_identifier(std::string_view name);

/// "a::b::c" where each part is usable.
bool is_usable_namespace(std::string_view name);

/// `name` with every character outside [A-Za-z0-9_] replaced by '_'.
std::string identifier_from(std::string_view name);

} // namespace blocc::compile
