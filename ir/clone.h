// A deep copy of a function: the same ops, types, attributes, locations and
// argument facts, in new objects. A backend that annotates the IR with its
// own decisions (the GPU backend's passes) works on a copy, so that the
// traced kernel it was given stays as the user's program and every other
// backend, cache and inspection sees it unchanged.
#pragma once

#include "ir/function.h"

#include <memory>

namespace blocc::ir {

std::unique_ptr<Function> clone(const Function &function);

} // namespace blocc::ir
