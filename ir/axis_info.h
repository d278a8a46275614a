#pragma once
#include "ir/function.h"
#include <string>
namespace blocc::ir {
std::string print_axis_info(Function &f);
}
