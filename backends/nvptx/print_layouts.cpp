#include "backends/nvptx/print_layouts.h"

#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/conversion_path.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/kernel_lowering.h"
#include "backends/nvptx/mma_layouts.h"
#include "ir/printer.h"

#include <algorithm>

namespace blocc::nvptx {

namespace {

std::string list(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

class LayoutNotes {
public:
  LayoutNotes(const LayoutAssignment &layouts, int num_warps,
              const std::map<const ir::Operation *, PipelinedLoop> &pipelined)
      : layouts_(layouts), num_warps_(num_warps) {
    for (const auto &[loop, plan] : pipelined) {
      stages_[loop] = plan.stages;
      for (const PipelinedLoad &load : plan.loads)
        copied_ahead_[load.load] = plan.stages;
      for (const PrefetchedLoad &load : plan.prefetched)
        copied_ahead_[load.load] = plan.stages;
    }
  }

  std::string layout(const Layout &l) const {
    const BlockedLayout &parent = layouts_.parent(l);
    std::string s = "#blocked" + std::to_string(l.parent);
    std::vector<int64_t> sliced;
    for (int d = 0; d < parent.rank(); ++d)
      if (std::find(l.dims.begin(), l.dims.end(), d) == l.dims.end())
        sliced.push_back(d);
    if (!sliced.empty())
      s = "slice(" + s + ", " + list(sliced) + ")";
    if (!std::is_sorted(l.dims.begin(), l.dims.end()))
      s += " permuted " +
           list(std::vector<int64_t>(l.dims.begin(), l.dims.end()));
    std::vector<int64_t> ones;
    for (size_t k = 0; k < l.dims.size() && k < l.shape.size(); ++k)
      if (l.shape[k] == 1 && parent.shape[l.dims[k]] > 1)
        ones.push_back(static_cast<int64_t>(k));
    if (!ones.empty())
      s += " with size 1 along " + list(ones);
    return s;
  }

  /// The layouts `v` is needed in, "" for a value that has none.
  std::string value(const ir::Value *v) const {
    if (int number = layouts_.shared_number(v); number >= 0)
      return "#shared" + std::to_string(number) +
             (layouts_.shared_layout(v)->kind == SharedLayout::Kind::Swizzled
                  ? ", a tile in shared memory"
                  : ", in shared memory");
    const std::vector<Layout> &needed = layouts_.layouts_of(v);
    const Layout *home = layouts_.home(v);
    std::vector<std::string> others;
    for (const Layout &l : needed)
      if (!home || !(l == *home))
        others.push_back(layout(l));
    if (home) {
      std::string s = layout(*home);
      for (size_t i = 0; i < others.size(); ++i)
        s += (i ? ", " : ", converted to ") + others[i];
      return s;
    }
    std::string s;
    for (size_t i = 0; i < others.size(); ++i)
      s += (i == 0 ? "" : i + 1 == others.size() ? " and " : ", ") + others[i];
    if (others.size() > 1)
      s += ", computed in each";
    return s;
  }

  std::string op(const ir::Operation &op) const {
    std::vector<std::string> parts;
    for (size_t i = 0; i < op.num_results(); ++i) {
      std::string note = value(op.result(i));
      if (!note.empty())
        parts.push_back(op.num_results() == 1
                            ? note
                            : "#" + std::to_string(i) + ": " + note);
    }
    if (op.code() == ir::OpCode::ConvertLayout)
      parts.push_back(conversion(op));
    if (op.code() == ir::OpCode::Store && op.operand(1)->type().is_block())
      parts.push_back("stores from " + layout(layouts_.store_layout(op)));
    if (op.code() == ir::OpCode::Dot)
      parts.push_back(dot_units(op));
    if (auto it = stages_.find(&op); it != stages_.end())
      parts.push_back("pipelined in " + std::to_string(it->second) + " stages");
    if (auto it = copied_ahead_.find(&op); it != copied_ahead_.end())
      parts.push_back("copied into shared memory " +
                      std::to_string(it->second - 1) +
                      " iterations ahead (cp.async)");
    if (op.code() == ir::OpCode::Reduce && op.operand(0)->type().is_block())
      parts.push_back("reads its operands in " +
                      layout(layouts_.reduce_layout(op)));
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const ir::Block &region = *op.region(r);
      for (size_t j = 0; j < region.num_arguments(); ++j) {
        std::string note = value(region.argument(j));
        if (!note.empty())
          parts.push_back(region_name(op, r) + " argument " +
                          std::to_string(j) + ": " + note);
      }
    }
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i)
      s += (i ? "; " : "") + parts[i];
    return s;
  }

private:
  /// Where a convert_layout takes its value from, and through what
  /// (conversion_path.h).
  std::string conversion(const ir::Operation &convert) const {
    const Layout *from = layouts_.home(convert.operand(0));
    const Layout *to = layouts_.home(convert.result());
    if (from && layouts_.shared_layout(convert.result()))
      return "written from " + layout(*from);
    if (int number = layouts_.shared_number(convert.operand(0)); number >= 0)
      return "read from #shared" + std::to_string(number);
    if (!from || !to)
      return "";
    return "from " + layout(*from) + " through " +
           describe(
               conversion_path(linear_layout_of(layouts_.parent(*from), *from),
                               linear_layout_of(layouts_.parent(*to), *to)));
  }

  /// Which units a dot runs on, and why not on tensor cores.
  std::string dot_units(const ir::Operation &dot) const {
    const GpuArch &arch = layouts_.arch();
    std::optional<BlockedLayout> accumulator = accumulator_layout(dot);
    if (!accumulator) {
      std::string refusal = why_not_on_tensor_cores(dot, num_warps_, arch);
      return "on CUDA cores: " +
             (refusal.empty() ? "as its engine says" : refusal);
    }
    const ir::Type &c = dot.result()->type();
    const BlockedLayout &mma = *accumulator;
    int64_t along_m = mma.warps_per_cta[0], along_n = mma.warps_per_cta[1];
    if (runs_on_warpgroups(dot)) {
      const MmaInstruction instruction = *mma_instruction(dot, arch);
      return "on tensor cores: wgmma m64n" + std::to_string(c.dim(1)) + "k" +
             std::to_string(instruction.k) + " " + instruction.a + " into " +
             std::string(ir::scalar_name(instruction.accumulator)) +
             ", warpgroups: " + std::to_string(along_m / 4) +
             " along M, each issuing " +
             std::to_string(c.dim(0) / (16 * along_m)) + " per step of K" +
             (dot.has_attr(gpu_attr::kMmaAInRegisters) ? ", A from registers"
                                                       : "");
    }
    int64_t tiles = c.dim(0) / (16 * along_m) * (c.dim(1) / (8 * along_n));
    return "on tensor cores: " + mma_instruction(dot, arch)->describe() +
           ", warps " + std::to_string(along_m) + " x " +
           std::to_string(along_n) + ", " + std::to_string(tiles) +
           " tiles of 16 x 8 per warp";
  }

  static std::string region_name(const ir::Operation &op, size_t r) {
    if (op.code() == ir::OpCode::If)
      return r == 0 ? "then" : "else";
    if (op.code() == ir::OpCode::For)
      return "body";
    return "region " + std::to_string(r);
  }

  const LayoutAssignment &layouts_;
  int num_warps_;
  std::map<const ir::Operation *, int> stages_;       // pipelined loops
  std::map<const ir::Operation *, int> copied_ahead_; // their loads
};

} // namespace

std::string print_layouts(const ir::Function &function, int num_warps,
                          const GpuArch &arch) {
  ir::AxisInfoAnalysis axis_info(function);
  check_supported(function, axis_info);
  verify_gpu_ir(function, num_warps, arch);
  std::unique_ptr<LayoutAssignment> assigned =
      LayoutAssignment::of(function, axis_info, num_warps, arch);
  const LayoutAssignment &layouts = *assigned;
  LayoutNotes notes(layouts, num_warps,
                    plan_pipelined_loops(function, layouts, axis_info));
  std::string out = "// layouts of " + function.name() + " for " +
                    std::to_string(num_warps) +
                    (num_warps == 1 ? " warp:\n" : " warps:\n");
  // Each blocked layout, then the same as a linear map: where register,
  // lane and warp bits put an element (a [0, ...] image: a replica).
  for (size_t i = 0; i < layouts.parents().size(); ++i)
    out += "//   #blocked" + std::to_string(i) + " = " +
           layouts.parents()[i].str() +
           "\n//     linear: " + linear_layout_of(layouts.parents()[i]).str() +
           "\n";
  if (layouts.parents().empty())
    out += "//   (no block values)\n";
  // Each shared layout, then which element each offset holds (offsets
  // without the pads of a padded layout).
  for (size_t i = 0; i < layouts.shared_layouts().size(); ++i) {
    const SharedLayout &shared = layouts.shared_layouts()[i];
    out += "//   #shared" + std::to_string(i) + " = " + shared.str() +
           "\n//     linear: " + shared.linear_layout().str() + "\n";
  }
  return out + ir::print(function,
                         [&](const ir::Operation &op) { return notes.op(op); });
}

} // namespace blocc::nvptx
