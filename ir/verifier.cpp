#include "ir/passes.h"

namespace blocc::ir {

void verify(Function &) {}

} // namespace blocc::ir
