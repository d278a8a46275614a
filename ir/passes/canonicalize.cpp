#include "ir/passes.h"

namespace blocc::ir {

void canonicalize(Function &) {}

} // namespace blocc::ir
