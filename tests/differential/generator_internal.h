// The state of one kernel being generated, shared by the files that fill it
// in: kernel_generator.cpp (layout, arguments, index prologue, inputs,
// outputs), random_operands.cpp (operands and their guards), random_ops.cpp
// (elementwise, cast, shape ops, dot), random_structures.cpp (reductions,
// scans, loops, ifs), random_atomics.cpp, random_matmul.cpp (a K loop of
// dots over tiles of two matrices) and pass_forms.cpp (identities and
// repeats for the passes). Not part of the generator's interface.
#pragma once

#include "ir/builder.h"
#include "kernel_generator.h"
#include "random.h"
#include "value_facts.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace blocc::differential::detail {

using ir::OpCode;
using ir::Scalar;
using ir::Type;
using ir::Value;
using Shape = std::vector<int64_t>;

/// How the program instances tile the data: one dimension (blocks of B
/// over n elements), two (BM x BN tiles over an M x N row-major matrix) or
/// three (BB x BM x BN boxes over a B x M x N row-major array).
struct Layout {
  int rank = 1;
  int64_t block[3] = {1, 1, 1}; // the block's extent per dimension
  int64_t size[3] = {1, 1, 1};  // the data's
  Grid grid;

  Shape main_shape() const { return Shape(block, block + rank); }
  int64_t elements() const { return size[0] * size[1] * size[2]; }
};

/// What an operand must satisfy; operand() adds guards (max, abs, and,
/// clamps) to a random value until it does.
enum class Need {
  Any,
  Exact,        // floats: computed exactly by every correct executor
  Positive,     // floats: at least 2^-4 (log, sqrt, rsqrt)
  FloatDivisor, // floats: at least 2^-4 away from 0
  ExactDivisor, // floats: exact and away from 0 (fmod)
  IntDivisor,   // integers: at least 1
  ShiftAmount,  // integers: in [0, width)
  Small,        // floats: magnitude at most 4 (exp, sin, cos)
};

/// The element types of input buffers (repeats make a type likelier).
const std::vector<Scalar> &input_dtypes();
/// The element types random ops compute in, and how likely each is.
const std::vector<Scalar> &value_dtypes();
const std::vector<int> &value_dtype_weights();
/// One of eq, ne, lt, le, gt, ge.
const char *random_predicate(Random &rng);

/// A loop being built: loads inside it may depend on its induction variable.
struct LoopContext {
  Value *iv;
  double iv_hi; // the largest value iv takes (iv >= 0)
};

class KernelGenerator {
public:
  KernelGenerator(uint64_t seed, const GeneratorOptions &options);
  GeneratedKernel run();

private:
  // --- kernel_generator.cpp ------------------------------------------------
  Value *int_argument(const std::string &name, Scalar s, int64_t value);
  Value *buffer_argument(const std::string &prefix, const BufferSpec &spec);
  ValueFacts input_values(Scalar s);
  void build_prologue();
  /// The 3-D prologue's offsets, mask and linear program id, from each
  /// dimension's range and mask.
  void build_box_prologue(const std::vector<Value *> &ranges,
                          const std::vector<Value *> &masks);
  void load_inputs();
  /// A new input buffer of `elements` read as a masked block at offsets.
  Value *load_buffer(Scalar s, int64_t elements, Value *offsets, Value *mask);
  Value *chunk_offsets(const Shape &shape);
  void store_outputs();
  void store(Value *v, bool last);

  // --- random_ops.cpp, random_operands.cpp, pass_forms.cpp ----------------
  void random_actions(int count);
  bool random_action();
  bool elementwise_action();
  bool compare_select_action();
  bool cast_action();
  bool bitcast_action();
  bool constant_action();
  bool shape_action();
  bool identity_action();
  bool repeat_action();
  bool dot_action();
  /// The accumulator type of a dot of `d` inputs: f32 or `d` for f16 and
  /// bf16, i32 for narrow integers, `d` otherwise.
  Scalar dot_accumulator(Scalar d);
  bool atomic_action();
  Value *all_ones(Scalar d, const Shape &shape);
  ir::Operation *clone(const ir::Operation &op,
                       std::unordered_map<const Value *, Value *> &mapping);

  Shape pick_shape();
  Scalar pick_dtype();
  Value *operand(Scalar d, const Shape &shape, Need need);
  Value *pick_candidate(Scalar d, const Shape &shape, Need need);
  bool adaptable(const Shape &from, const Shape &to) const;
  Value *adapt_shape(Value *v, const Shape &shape);
  Value *convert(Value *v, Scalar d);
  Value *guard(Value *v, Need need);
  Value *clamp(Value *v, double lo, double hi);
  Value *comparison(const Shape &shape);

  // --- random_matmul.cpp ---------------------------------------------------
  bool k_loop_dot_action();
  /// rows[i] * row_stride + cols[j] * col_stride as a [rows, cols] block.
  Value *tile_offsets(Value *rows, Value *cols, Value *row_stride,
                      Value *col_stride);

  // --- random_structures.cpp -----------------------------------------------
  bool reduce_action(bool scan);
  bool for_action();
  bool if_action();
  bool loop_load_action();
  Value *scalar_condition();
  Value *index_along(const Shape &shape, int axis);
  Value *next_carried(Value *arg, const ValueFacts &bounds, bool clamped);

  // --- helpers (kernel_generator.cpp) --------------------------------------
  /// Builds an op and derives its facts; removes it again and returns
  /// nullptr when the facts show it is not admissible.
  Value *make(OpCode code, std::vector<Value *> operands, Type type,
              ir::Attributes attributes = {});
  /// Evaluates a just-built op with regions; erases it when inadmissible.
  bool admit(ir::Operation *op);
  Value *constant(Scalar d, const Shape &shape, double value);
  double special_value();
  Value *cmp(const std::string &predicate, Value *a, Value *b);
  /// `v` ([shape[axis]]) broadcast along every other axis of `shape`.
  Value *spread_along(Value *v, int axis, const Shape &shape);
  /// Offers a value to later ops (nothing when it could not be built).
  void add(Value *v) {
    if (v)
      pool_.push_back(v);
  }
  const ValueFacts &facts(const Value *v) const { return facts_.get(v); }
  void next_line();
  /// Runs `fill` with the builder at the end of `block` and a pool scope
  /// that forgets the values made inside when it ends.
  template <typename F> void inside(ir::Block *block, F fill) {
    ir::Block *saved_block = b_.block();
    ir::Block::iterator saved_point = b_.point();
    size_t saved_pool = pool_.size();
    size_t saved_scope = scope_start_;
    scope_start_ = saved_pool;
    b_.set_insertion_point_to_end(block);
    ++depth_;
    fill();
    --depth_;
    pool_.resize(saved_pool);
    scope_start_ = saved_scope;
    b_.restore(saved_block, saved_point);
  }

  static Type type_of(Scalar d, const Shape &shape) {
    return Type::block(Type::scalar(d), shape);
  }

  Random rng_;
  GeneratorOptions options_;
  Layout layout_;
  GeneratedKernel kernel_;
  FactsAnalysis facts_;
  ir::Builder b_;
  int line_ = 0;
  int depth_ = 0;          // regions the builder is inside
  int budget_ = 0;         // actions left
  size_t scope_start_ = 0; // first pool entry of the innermost region
  std::vector<Value *> pool_;
  std::vector<LoopContext> loops_;
  std::unordered_map<const Value *, Value *>
      initial_values_; // body arg -> init

  // The prologue's index values.
  Scalar index_type_ = Scalar::I32;
  Value *pid_[3] = {nullptr, nullptr, nullptr};
  Value *pid_linear_ = nullptr;
  Value *sizes_[3] = {nullptr, nullptr, nullptr}; // per dimension (index type)
  Value *stride_ = nullptr;  // elements of a main-shaped buffer (index type)
  Value *offsets_ = nullptr; // main shape
  Value *mask_ = nullptr;    // main shape
  Value *rows_ = nullptr, *row_mask_ = nullptr; // 2-D: [BM]
  Value *cols_ = nullptr, *col_mask_ = nullptr; // 2-D: [BN]
  bool all_in_bounds_ = false; // every lane of every program in bounds
  bool specials_ = false;      // inf and NaN in float inputs and constants
  size_t prologue_end_ = 0;    // pool entries before it are index values
  int outputs_ = 0, inputs_ = 0, scalars_ = 0;
};

} // namespace blocc::differential::detail
