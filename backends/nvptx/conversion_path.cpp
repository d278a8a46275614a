#include "backends/nvptx/conversion_path.h"

namespace blocc::nvptx {

namespace {

/// Whether every bit of hardware dimension `name` of the destination reads
/// from the same bit of the same dimension in the source, and nothing else
/// reads from that dimension: the dimension is not crossed.
bool kept(const ir::LinearLayout &source_of, const std::string &name) {
  for (const ir::LinearLayout::Dimension &d : source_of.inputs())
    for (int b = 0; b < d.bits; ++b) {
      ir::LinearLayout::Point p = source_of.image(d.name, b);
      int64_t along = p.count(name) ? p.at(name) : 0;
      int64_t want = d.name == name ? int64_t{1} << b : 0;
      if (along != want)
        return false;
    }
  return true;
}

} // namespace

ConversionPath conversion_path(const ir::LinearLayout &from,
                               const ir::LinearLayout &to) {
  // For each destination index, the source index that holds its element.
  ir::LinearLayout source_of = to.invert_and_compose(from);
  if (!kept(source_of, "warp"))
    return ConversionPath::SharedMemory;
  if (!kept(source_of, "lane"))
    return ConversionPath::Shuffles;
  return ConversionPath::Registers;
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
