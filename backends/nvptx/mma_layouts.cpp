#include "backends/nvptx/mma_layouts.h"

#include <set>

namespace blocc::nvptx {

namespace {

using ir::LinearLayout;

/// The lanes of every m16n8 fragment: lane % 4 picks a pair of columns
/// (dimension `pairs`, bits 1 and 2), lane / 4 the row (dimension `rows`,
/// bits 0 to 2).
std::vector<std::vector<int64_t>> lane_images(int rows, int pairs) {
  std::vector<std::vector<int64_t>> images;
  auto at = [&](int dimension, int64_t value) {
    std::vector<int64_t> coordinates = {0, 0};
    coordinates[size_t(dimension)] = value;
    return coordinates;
  };
  images.push_back(at(pairs, 2));
  images.push_back(at(pairs, 4));
  images.push_back(at(rows, 1));
  images.push_back(at(rows, 2));
  images.push_back(at(rows, 4));
  return images;
}

} // namespace

LinearLayout mma_m16n8k16_accumulator() {
  // c0..c3: i & 1 the second column of the pair, i & 2 the row 8 below.
  return LinearLayout::from_images({{"register", 2}, {"lane", 5}},
                                   {{"dim0", 4}, {"dim1", 3}},
                                   {{{0, 1}, {8, 0}}, lane_images(0, 1)});
}

LinearLayout mma_m16n8k16_operand_a() {
  // a0..a7: i & 1 the second column, i & 2 the row 8 below, i & 4 the
  // columns 8 to the right.
  return LinearLayout::from_images(
      {{"register", 3}, {"lane", 5}}, {{"dim0", 4}, {"dim1", 4}},
      {{{0, 1}, {8, 0}, {0, 8}}, lane_images(0, 1)});
}

LinearLayout mma_m16n8k16_operand_b() {
  // b0..b3: i & 1 the second row (k) of the pair, i & 2 the rows 8 below;
  // the group is the column (n).
  return LinearLayout::from_images({{"register", 2}, {"lane", 5}},
                                   {{"dim0", 4}, {"dim1", 3}},
                                   {{{1, 0}, {8, 0}}, lane_images(1, 0)});
}

LinearLayout mma_m16n8k8_tf32_operand_a() {
  // a0..a3: i & 1 the row 8 below, i & 2 the column 4 to the right; lane
  // % 4 is the column itself (one element a word).
  return LinearLayout::from_images(
      {{"register", 2}, {"lane", 5}}, {{"dim0", 4}, {"dim1", 3}},
      {{{8, 0}, {0, 4}}, {{0, 1}, {0, 2}, {1, 0}, {2, 0}, {4, 0}}});
}

LinearLayout mma_m16n8k8_tf32_operand_b() {
  // b0, b1: lane % 4 the row (k), b1 the row 4 below; the group the
  // column.
  return LinearLayout::from_images(
      {{"register", 1}, {"lane", 5}}, {{"dim0", 3}, {"dim1", 3}},
      {{{4, 0}}, {{1, 0}, {2, 0}, {0, 1}, {0, 2}, {0, 4}}});
}

LinearLayout mma_m16n8k32_8bit_operand_a() {
  // a0..a15: i & 3 the byte of a register (consecutive columns), i & 4
  // the row 8 below, i & 8 the columns 16 to the right; lane % 4 a word
  // of four columns.
  return LinearLayout::from_images({{"register", 4}, {"lane", 5}},
                                   {{"dim0", 4}, {"dim1", 5}},
                                   {{{0, 1}, {0, 2}, {8, 0}, {0, 16}},
                                    {{0, 4}, {0, 8}, {1, 0}, {2, 0}, {4, 0}}});
}

LinearLayout mma_m16n8k32_8bit_operand_b() {
  // b0..b7: i & 3 the byte (consecutive rows of K), i & 4 the rows 16
  // below; lane % 4 a word of four rows, the group the column.
  return LinearLayout::from_images(
      {{"register", 3}, {"lane", 5}}, {{"dim0", 5}, {"dim1", 3}},
      {{{1, 0}, {2, 0}, {16, 0}}, {{4, 0}, {8, 0}, {0, 1}, {0, 2}, {0, 4}}});
}

std::string MmaInstruction::describe() const {
  std::string types = a == b ? a : a + " by " + b;
  return std::string(split_tf32 ? "3 x " : "") + "mma.sync m16n8k" +
         std::to_string(k) + " " + types + " into " +
         std::string(ir::scalar_name(accumulator)) +
         (split_tf32 ? " (tf32x3)" : "");
}

namespace {

/// The PTX type of an MMA input of element type `s`, "" where none.
std::string mma_input_type(ir::Scalar s) {
  switch (s) {
  case ir::Scalar::F16:
    return "f16";
  case ir::Scalar::BF16:
    return "bf16";
  case ir::Scalar::F32:
    return "tf32";
  case ir::Scalar::I8:
    return "s8";
  case ir::Scalar::U8:
    return "u8";
  case ir::Scalar::F8E4M3:
    return "e4m3";
  case ir::Scalar::F8E5M2:
    return "e5m2";
  default:
    return "";
  }
}

} // namespace

std::optional<MmaInstruction> mma_instruction(const ir::Operation &dot,
                                              const GpuArch &arch,
                                              std::string *why) {
  auto refuse = [&](std::string reason) {
    if (why)
      *why = std::move(reason);
    return std::nullopt;
  };
  const ir::Type &a = dot.operand(0)->type(), &b = dot.operand(1)->type();
  const ir::Type &c = dot.result()->type();
  if (c.rank() != 2)
    return refuse("a batched dot (tensor cores take two-dimensional blocks)");
  MmaInstruction mma;
  mma.a = mma_input_type(a.element());
  mma.b = mma_input_type(b.element());
  mma.accumulator = c.element();
  mma.input_bytes = a.element() == ir::Scalar::F32      ? 4
                    : mma.a == "f16" || mma.a == "bf16" ? 2
                                                        : 1;
  mma.k = 32 / mma.input_bytes;
  const std::string types = a.str() + " by " + b.str() + " into " +
                            std::string(ir::scalar_name(c.element()));
  const bool sixteen = mma.input_bytes == 2 && a.element() == b.element();
  const bool tf32 = mma.a == "tf32" && mma.b == "tf32";
  const bool bytes =
      (mma.a == "s8" || mma.a == "u8") && (mma.b == "s8" || mma.b == "u8");
  const bool fp8 = ir::is_fp8(a.element()) && ir::is_fp8(b.element());
  if (tf32 && c.element() == ir::Scalar::F32) {
    // Without the attribute (hand-written IR) the dot is IEEE, as the
    // interpreter computes it; the frontend records it for every f32 dot.
    std::string precision = dot.string_attr_or("input_precision", "ieee");
    if (precision == "ieee")
      return refuse(types +
                    " with input_precision ieee (tensor cores round f32 "
                    "inputs to tf32)");
    mma.split_tf32 = precision == "tf32x3";
  } else if (fp8 && c.element() == ir::Scalar::F32) {
    // PTX has fp8 MMAs from sm_89 (Ada) on.
    if (arch.sm < 89)
      return refuse(types + " on " + arch.name() +
                    " (tensor cores take fp8 from sm_89)");
  } else if (!(sixteen && (c.element() == ir::Scalar::F32 ||
                           (c.element() == ir::Scalar::F16 &&
                            a.element() == ir::Scalar::F16))) &&
             !(bytes && (c.element() == ir::Scalar::I32 ||
                         c.element() == ir::Scalar::U32))) {
    return refuse(types + " (tensor cores take f16 by f16 into f16 or f32, "
                          "bf16 by bf16, f32 (as tf32) or fp8 (sm_89 on) into "
                          "f32, int8 by int8 into int32)");
  }
  if (bytes)
    mma.accumulator = ir::Scalar::I32; // s32: the same bits as u32
  int64_t m = c.dim(0), k = a.dim(1);
  if (m % 16 != 0 || k % mma.k != 0)
    return refuse("M = " + std::to_string(m) + ", K = " + std::to_string(k) +
                  " (tensor cores take M in 16s and K in " +
                  std::to_string(mma.k) + "s for " + mma.a + ")");
  return mma;
}

namespace {

/// Whether `v` is computed, within `block`, from the result of a dot; a
/// loop's carried value counts where each iteration yields one so
/// computed (attention's probabilities carried into the next iteration).
bool derives_from_a_dot(const ir::Value *v, const ir::Block *block,
                        std::set<const ir::Value *> &seen) {
  if (v->owner_block() != block || !seen.insert(v).second)
    return false;
  if (std::optional<ir::CarriedValues> carried = ir::carried_values(v))
    return derives_from_a_dot(carried->yielded, block, seen);
  const ir::Operation *op = v->defining_op();
  if (!op)
    return false;
  if (op->code() == ir::OpCode::Dot)
    return true;
  for (const ir::Value *operand : op->operands())
    if (derives_from_a_dot(operand, block, seen))
      return true;
  return false;
}

/// Whether the result of `dot` becomes, through the ops after it in its
/// block, the A of another dot: in this iteration, or, through a value
/// its loop carries, in the next.
bool feeds_another_dot_as_a(const ir::Operation &dot) {
  const ir::Block *block = dot.result()->owner_block();
  std::set<const ir::Value *> derived = {dot.result()};
  // Whether `op` reads a derived value; its results are derived then.
  auto derives = [&](const ir::Operation &op) {
    bool uses = false;
    for (const ir::Value *operand : op.operands())
      uses = uses || derived.count(operand);
    if (uses)
      for (const ir::Value *result : op.results())
        derived.insert(result);
    return uses;
  };
  bool after = false;
  for (const auto &op : block->ops()) {
    if (op.get() == &dot) {
      after = true;
      continue;
    }
    if (!after || !derives(*op))
      continue;
    if (op->code() == ir::OpCode::Dot && derived.count(op->operand(0)))
      return true;
  }
  const ir::Operation *loop = block->parent_op();
  if (!loop || loop->code() != ir::OpCode::For)
    return false;
  // The next iteration.
  const ir::Operation *yield = block->terminator();
  for (size_t k = 0; k < yield->num_operands(); ++k)
    if (derived.count(yield->operand(k)))
      derived.insert(block->argument(k + 1));
  for (const auto &op : block->ops())
    if (derives(*op) && op->code() == ir::OpCode::Dot &&
        derived.count(op->operand(0)))
      return true;
  return false;
}

} // namespace

bool in_dot_chain(const ir::Operation &dot) {
  return feeds_another_dot_as_a(dot) || a_from_a_dot(dot);
}

bool a_from_a_dot(const ir::Operation &dot) {
  std::set<const ir::Value *> seen;
  return derives_from_a_dot(dot.operand(0), dot.result()->owner_block(), seen);
}

std::optional<std::pair<int64_t, int64_t>>
mma_warp_grid(int64_t m, int64_t n, int num_warps, bool rows_only) {
  // Warps split the block where each warp's part is longer, so that a
  // warp's tile of C stays near square: it then reads the fewest operand
  // fragments per MMA it issues (shared memory's bandwidth is the bound).
  if (m % 16 != 0 || n % 8 != 0)
    return std::nullopt;
  if (rows_only)
    return m % (16 * int64_t{num_warps}) == 0
               ? std::optional(std::make_pair(int64_t{num_warps}, int64_t{1}))
               : std::nullopt;
  int64_t along_m = 1, along_n = 1;
  while (along_m * along_n < num_warps) {
    bool m_can = m % (32 * along_m) == 0, n_can = n % (16 * along_n) == 0;
    if (m_can && (m / along_m >= n / along_n || !n_can))
      along_m *= 2;
    else if (n_can)
      along_n *= 2;
    else
      return std::nullopt;
  }
  return std::make_pair(along_m, along_n);
}

std::string why_not_on_tensor_cores(const ir::Operation &dot, int num_warps,
                                    const GpuArch &arch) {
  std::string why;
  if (!mma_instruction(dot, arch, &why))
    return why;
  const ir::Type &c = dot.result()->type();
  int64_t m = c.dim(0), n = c.dim(1);
  if (!mma_warp_grid(m, n, num_warps, in_dot_chain(dot)))
    return std::to_string(m) + " x " + std::to_string(n) + " on " +
           std::to_string(num_warps) +
           " warps (tensor cores take a 16 x 8 tile or more per warp)";
  return "";
}

BlockedLayout mma_fragments_layout(int64_t rows, int64_t cols, int64_t along_m,
                                   int64_t along_n) {
  return BlockedLayout{{rows, cols}, {1, 2}, {8, 4}, {along_m, along_n}};
}

std::optional<BlockedLayout> mma_accumulator_layout(const ir::Operation &dot,
                                                    int num_warps,
                                                    const GpuArch &arch) {
  if (!why_not_on_tensor_cores(dot, num_warps, arch).empty())
    return std::nullopt;
  const ir::Type &c = dot.result()->type();
  auto [along_m, along_n] =
      *mma_warp_grid(c.dim(0), c.dim(1), num_warps, in_dot_chain(dot));
  return mma_fragments_layout(c.dim(0), c.dim(1), along_m, along_n);
}

FragmentTile fragment_tile(const ir::Operation &dot, int operand,
                           bool k_fastest) {
  const ir::Type &type = dot.operand(static_cast<size_t>(operand))->type();
  int k_dim = operand == 0 ? 1 : 0;
  int64_t k = type.dim(k_dim), mn = type.dim(1 - k_dim);
  FragmentTile tile;
  static_cast<SharedTile &>(tile) =
      swizzled_tile(k_fastest ? mn : k, k_fastest ? k : mn,
                    ir::scalar_bits(type.element()) / 8);
  tile.k_fastest = k_fastest;
  return tile;
}

SharedLayout shared_layout_of(const FragmentTile &tile, int operand) {
  const int64_t k_dim = operand == 0 ? 1 : 0, mn_dim = 1 - k_dim;
  SharedLayout shared;
  shared.kind = SharedLayout::Kind::Swizzled;
  const int64_t k = tile.k_fastest ? tile.columns : tile.rows;
  const int64_t mn = tile.k_fastest ? tile.rows : tile.columns;
  shared.shape =
      operand == 0 ? std::vector<int64_t>{mn, k} : std::vector<int64_t>{k, mn};
  shared.order = tile.k_fastest ? std::vector<int64_t>{k_dim, mn_dim}
                                : std::vector<int64_t>{mn_dim, k_dim};
  shared.swizzle = tile.swizzle;
  return shared;
}

std::optional<FragmentTile> fragment_tile_of(const SharedLayout &shared,
                                             int operand, int64_t element_bytes,
                                             bool warpgroups) {
  if (shared.kind != SharedLayout::Kind::Swizzled || shared.shape.size() != 2 ||
      !shared.problem().empty() ||
      shared.shape[size_t(shared.order[0])] * element_bytes < 16)
    return std::nullopt;
  const int64_t k_dim = operand == 0 ? 1 : 0;
  FragmentTile tile;
  static_cast<SharedTile &>(tile) = shared.tile(element_bytes);
  tile.k_fastest = shared.order[0] == k_dim;
  const Swizzle expected =
      warpgroups
          ? wgmma_swizzle(tile.columns * element_bytes, element_bytes)
          : swizzled_tile(tile.rows, tile.columns, element_bytes).swizzle;
  if (!(tile.swizzle == expected))
    return std::nullopt;
  return tile;
}

ir::LinearLayout ldmatrix_rows(const FragmentTile &tile, int operand,
                               const BlockedLayout &accumulator,
                               int64_t input_bytes) {
  const int64_t warps_m = accumulator.warps_per_cta[0];
  const int64_t warps_n = accumulator.warps_per_cta[1];
  const int64_t mn_extent = tile.k_fastest ? tile.rows : tile.columns;
  // (mn, k) of each input bit: lane bits 0-2 the row within a matrix,
  // lane bits 3 and 4 the matrix, warp bits warp_n then warp_m.
  const int64_t half = 16 / input_bytes;                        // 16 bytes of K
  const int64_t next_tile = operand == 0 ? accumulator.tile(0)  // rows 8-15
                                         : accumulator.tile(1); // next 8 cols
  std::vector<std::pair<int64_t, int64_t>> lane(5), warp;
  for (int b = 0; b < 3; ++b)
    lane[b] = tile.k_fastest ? std::pair<int64_t, int64_t>{1 << b, 0}
                             : std::pair<int64_t, int64_t>{0, 1 << b};
  std::pair<int64_t, int64_t> other_mn{
      2 * next_tile <= mn_extent ? next_tile : 0, 0};
  std::pair<int64_t, int64_t> next_k{0, half};
  lane[3] = operand == 0 ? other_mn : next_k;
  lane[4] = operand == 0 ? next_k : other_mn;
  for (int64_t w = 1; w < warps_n; w *= 2)
    warp.push_back({operand == 1 ? 8 * w : 0, 0});
  for (int64_t w = 1; w < warps_m; w *= 2)
    warp.push_back({operand == 0 ? 8 * w : 0, 0});
  auto images = [&](const std::vector<std::pair<int64_t, int64_t>> &bits) {
    std::vector<std::vector<int64_t>> out;
    for (auto [mn, k] : bits)
      out.push_back(tile.k_fastest ? std::vector<int64_t>{mn, k}
                                   : std::vector<int64_t>{k, mn});
    return out;
  };
  return ir::LinearLayout::from_images(
      {{"lane", 5}, {"warp", static_cast<int>(warp.size())}},
      {{"dim0", ir::LinearLayout::bits_of(tile.rows, "tile rows")},
       {"dim1", ir::LinearLayout::bits_of(tile.columns, "tile columns")}},
      {images(lane), images(warp)});
}

bool fragment_tile_k_fastest(const ir::Operation &dot,
                             const BlockedLayout &parent, const Layout &layout,
                             int operand) {
  const ir::Type &type = dot.operand(static_cast<size_t>(operand))->type();
  return ir::scalar_bits(type.element()) / 8 != 2 ||
         operand_runs_along_k(parent, layout, operand);
}

bool operand_runs_along_k(const BlockedLayout &parent, const Layout &layout,
                          int operand) {
  int k_dim = operand == 0 ? 1 : 0;
  int fastest = parent.rank() - 1;
  for (size_t d = 0; d < layout.dims.size(); ++d)
    if (layout.dims[d] == fastest && layout.shape[d] > 1)
      return static_cast<int>(d) == k_dim;
  return operand == 0;
}

std::optional<BlockedLayout> mma_operand_a_layout(const ir::Operation &dot,
                                                  int num_warps,
                                                  const GpuArch &arch) {
  std::optional<BlockedLayout> mma =
      mma_accumulator_layout(dot, num_warps, arch);
  if (!mma || mma->warps_per_cta[1] != 1 ||
      ir::scalar_bits(dot.operand(0)->type().element()) / 8 != 2)
    return std::nullopt;
  const ir::Block *block = dot.result()->owner_block();
  const ir::Value *a = dot.operand(0);
  std::set<const ir::Value *> seen;
  // A loop's dot whose A is computed before the loop keeps A's fragments
  // in registers across it (attention's Q).
  const bool before_the_loop = block->parent_op() &&
                               block->parent_op()->code() == ir::OpCode::For &&
                               a->owner_block() != block;
  if (!before_the_loop && !derives_from_a_dot(a, block, seen))
    return std::nullopt;
  const ir::Type &type = a->type();
  return mma_fragments_layout(type.dim(0), type.dim(1), mma->warps_per_cta[0],
                              1);
}

MmaFragmentElement mma_fragment_element(const BlockedLayout &layout,
                                        int64_t r) {
  // Along M the registers step by the tile (8 rows a warp): repetitions
  // 2t and 2t + 1 are rows g and g + 8 of fragment t. Along N they step by
  // the tile too (8 columns a warp), the column pair within it.
  std::vector<int64_t> offset = layout.register_offset(r);
  int64_t row_repetition = offset[0] / layout.tile(0);
  int64_t column = offset[1] % layout.tile(1);
  return {row_repetition / 2, offset[1] / layout.tile(1),
          (row_repetition % 2) * 2 + column};
}

} // namespace blocc::nvptx
