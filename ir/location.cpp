#include "ir/location.h"

namespace blocc::ir {

std::string Location::str() const {
  if (file.empty())
    return "";
  auto slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  return base + ":" + std::to_string(line);
}

} // namespace blocc::ir
