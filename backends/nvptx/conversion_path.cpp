#include "backends/nvptx/conversion_path.h"

namespace blocc::nvptx {

namespace {

/// Coordinate `name` of `p` (0 where `p` has no such dimension).
int64_t along(const ir::LinearLayout::Point &p, const std::string &name) {
  auto it = p.find(name);
  return it == p.end() ? 0 : it->second;
}

/// Whether every bit of hardware dimension `name` of the destination reads
/// from the same bit of the same dimension in the source, and nothing else
/// reads from that dimension: the dimension is not crossed.
bool kept(const ir::LinearLayout &source_of, const std::string &name) {
  for (const ir::LinearLayout::Dimension &d : source_of.inputs())
    for (int b = 0; b < d.bits; ++b) {
      int64_t want = d.name == name ? int64_t{1} << b : 0;
      if (along(source_of.image(d.name, b), name) != want)
        return false;
    }
  return true;
}

/// The path of a conversion whose destination index reads source index
/// `source_of`.
ConversionPath path_of(const ir::LinearLayout &source_of) {
  if (!kept(source_of, "warp"))
    return ConversionPath::SharedMemory;
  if (!kept(source_of, "lane"))
    return ConversionPath::Shuffles;
  return ConversionPath::Registers;
}

/// Whether no lane or warp bit of the destination changes the register it
/// reads from its source thread.
bool register_independent_of_thread(const ir::LinearLayout &source_of) {
  for (const ir::LinearLayout::Dimension &d : source_of.inputs())
    for (int b = 0; d.name != "register" && b < d.bits; ++b)
      if (along(source_of.image(d.name, b), "register") != 0)
        return false;
  return true;
}

} // namespace

bool WarpRoute::crosses_lanes() const {
  if (!keeps_lanes())
    return true;
  for (int64_t x : lane_xor)
    if (x != 0)
      return true;
  return false;
}

bool WarpRoute::keeps_lanes() const {
  for (size_t b = 0; b < lane_images.size(); ++b)
    if (lane_images[b] != int64_t{1} << b)
      return false;
  return true;
}

std::optional<WarpRoute> warp_route(const ir::LinearLayout &from,
                                    const ir::LinearLayout &to) {
  ir::LinearLayout source_of = to.invert_and_compose(from);
  if (path_of(source_of) == ConversionPath::SharedMemory ||
      !register_independent_of_thread(source_of))
    return std::nullopt;
  WarpRoute route;
  const int64_t registers = int64_t{1} << source_of.input_bits("register");
  for (int64_t r = 0; r < registers; ++r) {
    ir::LinearLayout::Point p = source_of.apply({{"register", r}});
    route.source_register.push_back(along(p, "register"));
    route.lane_xor.push_back(along(p, "lane"));
  }
  for (int b = 0; b < source_of.input_bits("lane"); ++b)
    route.lane_images.push_back(along(source_of.image("lane", b), "lane"));
  return route;
}

ConversionPath conversion_path(const ir::LinearLayout &from,
                               const ir::LinearLayout &to) {
  // For each destination index, the source index that holds its element.
  return path_of(to.invert_and_compose(from));
}

std::string describe(ConversionPath path) {
  switch (path) {
  case ConversionPath::Registers:
    return "registers";
  case ConversionPath::Shuffles:
    return "shuffles";
  case ConversionPath::SharedMemory:
    return "shared memory";
  }
  return "?";
}

} // namespace blocc::nvptx
