#include "backends/nvptx/fault_sites.h"

namespace blocc::nvptx {

namespace {

std::string describe_lane(uint32_t lane, const std::vector<int64_t> &shape) {
  std::string s = "lane " + std::to_string(lane);
  if (shape.size() < 2)
    return s;
  std::vector<int64_t> index(shape.size());
  int64_t rest = lane;
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  s += " (index (";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "))";
}

} // namespace

std::string describe_fault(const std::string &kernel, const FaultSite &site,
                           const uint32_t pid[3], uint32_t lane) {
  std::string text = "kernel '" + kernel + "', program (" +
                     std::to_string(pid[0]) + ", " + std::to_string(pid[1]) +
                     ", " + std::to_string(pid[2]) + "), " + site.op + ": ";
  switch (site.form) {
  case FaultSite::Form::LaneFirst:
    return text + describe_lane(lane, site.shape) + ": " + site.message;
  case FaultSite::Form::NoLane:
    return text + site.message;
  case FaultSite::Form::FalseLane:
    return text + site.message + " (" + describe_lane(lane, site.shape) +
           " is false)";
  }
  return text + site.message;
}

} // namespace blocc::nvptx
