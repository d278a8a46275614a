#include "ir/passes.h"

namespace blocc::ir {

void dce(Function &) {}

} // namespace blocc::ir
