// The C++ that blocc-compile writes for a specialization: a header with one
// namespace per specialization holding its constants and a typed launch
// function per kind of target (`cpu`, `gpu`), and a source file holding the
// GPU code (PTX as text, cubins as bytes), the CPU program's sites, and the
// launch functions, which check the arguments against the specialization
// and call runtime/aot/launch.h. tools/README.md shows an example.
#pragma once

#include "tools/compile/compiled.h"
#include "tools/compile/specialization.h"

#include <string>

namespace blocc::compile {

/// OUT.h; `targets` describes what was compiled, for its comment.
std::string header_text(const Specialization &s, const Compiled &compiled,
                        const std::string &header_file);

/// OUT.cpp, which includes `header_file`.
std::string source_text(const Specialization &s, const Compiled &compiled,
                        const std::string &header_file);

} // namespace blocc::compile
