// The skeleton of a generated kernel: layout and grid, arguments, the index
// prologue (program ids, aranges, offsets, masks), input loads and output
// stores. The random code between them comes from random_ops.cpp and
// random_structures.cpp.
#include "generator_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace blocc::differential {

namespace detail {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A problem size for blocks of `block`: 1, a prime, a multiple of the
/// block, or one off a multiple, at most `max_programs` blocks.
int64_t odd_size(Random &rng, int64_t block, int64_t max_programs) {
  static const std::vector<int64_t> primes = {2,  3,  5,  7,   11,  13,  17, 31,
                                              37, 61, 97, 127, 131, 193, 251};
  int64_t limit = block * max_programs;
  int64_t k = rng.between(1, max_programs);
  int64_t n = 1;
  switch (rng.below(5)) {
  case 0:
    n = 1;
    break;
  case 1:
    n = rng.pick(primes);
    break;
  case 2:
    n = block * k;
    break;
  case 3:
    n = block * k + (rng.percent(50) ? 1 : -1);
    break;
  default:
    n = rng.between(1, limit);
    break;
  }
  return std::clamp<int64_t>(n, 1, limit);
}

/// Three dimensions (generation 3): boxes of at most 128 elements.
Layout choose_3d_layout(Random &rng) {
  Layout l;
  l.rank = 3;
  do {
    l.block[0] = int64_t{1} << rng.between(0, 2);
    l.block[1] = int64_t{1} << rng.between(0, 3);
    l.block[2] = int64_t{1} << rng.between(0, 5);
  } while (l.block[0] * l.block[1] * l.block[2] > 128);
  for (int d = 0; d < 3; ++d)
    l.size[d] = odd_size(rng, l.block[d], 2);
  l.grid =
      Grid(ceil_div(l.size[0], l.block[0]), ceil_div(l.size[1], l.block[1]),
           ceil_div(l.size[2], l.block[2]));
  return l;
}

/// Two dimensions of the blocks `l` holds: sizes around them, and the
/// grid that covers the sizes.
Layout two_dimensional(Random &rng, Layout l) {
  l.rank = 2;
  l.size[0] = odd_size(rng, l.block[0], 3);
  l.size[1] = odd_size(rng, l.block[1], 3);
  l.grid =
      Grid(ceil_div(l.size[0], l.block[0]), ceil_div(l.size[1], l.block[1]));
  return l;
}

/// Tensor-core tiles (generation 5): 16 or 32 rows by 8 to 64 columns,
/// the shapes a dot runs on tensor cores in (16 rows per MMA, 8 columns
/// per warp), at most 1024 elements.
Layout choose_mma_tile_layout(Random &rng) {
  Layout l;
  do {
    l.block[0] = int64_t{16} << rng.between(0, 1);
    l.block[1] = int64_t{8} << rng.between(0, 3);
  } while (l.block[0] * l.block[1] > 1024);
  return two_dimensional(rng, l);
}

Layout choose_layout(Random &rng, int generation) {
  if (generation >= 3 && rng.percent(15))
    return choose_3d_layout(rng);
  if (generation >= 5 && rng.percent(25))
    return choose_mma_tile_layout(rng);
  Layout l;
  if (rng.percent(65)) {
    l.rank = 1;
    l.block[0] = int64_t{1} << rng.between(0, 7);
    l.size[0] = odd_size(rng, l.block[0], l.block[0] >= 64 ? 3 : 5);
    l.grid = Grid(ceil_div(l.size[0], l.block[0]) + (rng.percent(15) ? 1 : 0));
    return l;
  }
  do {
    l.block[0] = int64_t{1} << rng.between(0, 4);
    l.block[1] = int64_t{1} << rng.between(0, 5);
  } while (l.block[0] * l.block[1] > 128);
  return two_dimensional(rng, l);
}

} // namespace

KernelGenerator::KernelGenerator(uint64_t seed, const GeneratorOptions &options)
    : rng_(seed), options_(options),
      layout_(choose_layout(rng_, options.generation)), facts_(layout_.grid) {
  kernel_.seed = seed;
  kernel_.grid = layout_.grid;
  specials_ = options.special_values && rng_.percent(25);
  kernel_.function =
      std::make_unique<ir::Function>("fuzz_" + std::to_string(seed));
  b_.set_insertion_point_to_end(&kernel_.function->body());
}

GeneratedKernel KernelGenerator::run() {
  build_prologue();
  prologue_end_ = pool_.size();
  load_inputs();
  budget_ = options_.size;
  while (budget_ > 0) {
    --budget_;
    random_action();
  }
  store_outputs();
  next_line();
  b_.create(OpCode::Return, {}, {});
  return std::move(kernel_);
}

// --- helpers -----------------------------------------------------------------

const std::vector<Scalar> &input_dtypes() {
  static const std::vector<Scalar> dtypes = {
      Scalar::I8,  Scalar::I16, Scalar::I32, Scalar::I32,
      Scalar::I64, Scalar::U32, Scalar::F16, Scalar::BF16,
      Scalar::F32, Scalar::F32, Scalar::F32, Scalar::F64};
  return dtypes;
}

void KernelGenerator::next_line() {
  b_.set_location(ir::Location{"generated.cpp", ++line_});
}

bool KernelGenerator::admit(ir::Operation *op) {
  if (facts_.evaluate(*op).empty())
    return true;
  op->parent_block()->erase(op);
  return false;
}

Value *KernelGenerator::make(OpCode code, std::vector<Value *> operands,
                             Type type, ir::Attributes attributes) {
  for (Value *v : operands)
    if (!v)
      return nullptr; // an operand could not be built
  ir::Operation *op =
      b_.create(code, std::move(operands), {type}, std::move(attributes));
  return admit(op) ? op->result() : nullptr;
}

Value *KernelGenerator::constant(Scalar d, const Shape &shape, double value) {
  // -0.0, infinities and NaN stay floats.
  bool integral = std::isfinite(value) && value == std::trunc(value) &&
                  !std::signbit(value);
  ir::Attribute attribute;
  if (!ir::is_float(d) || (integral && rng_.percent(25)))
    attribute = static_cast<int64_t>(value); // floats take integer values too
  else
    attribute = value;
  if (!shape.empty() && rng_.percent(25)) {
    Value *scalar =
        make(OpCode::Constant, {}, type_of(d, {}), {{"value", attribute}});
    return make(OpCode::Splat, {scalar}, type_of(d, shape));
  }
  return make(OpCode::Constant, {}, type_of(d, shape), {{"value", attribute}});
}

double KernelGenerator::special_value() {
  switch (rng_.below(3)) {
  case 0:
    return std::numeric_limits<double>::infinity();
  case 1:
    return -std::numeric_limits<double>::infinity();
  default:
    return std::numeric_limits<double>::quiet_NaN();
  }
}

Value *KernelGenerator::spread_along(Value *v, int axis, const Shape &shape) {
  // A unit dimension for every other axis, one expand_dims each in axis
  // order, then the broadcast.
  Scalar s = v->type().element();
  Value *expanded = v;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    if (d != axis) {
      Shape now = expanded->type().shape();
      now.insert(now.begin() + d, 1);
      expanded = make(OpCode::ExpandDims, {expanded}, type_of(s, now),
                      {{"axis", int64_t{d}}});
    }
  return make(OpCode::Broadcast, {expanded}, type_of(s, shape));
}

Value *KernelGenerator::cmp(const std::string &predicate, Value *a, Value *b) {
  if (!a || !b)
    return nullptr;
  return make(OpCode::Cmp, {a, b},
              a->type().with_element(Type::scalar(Scalar::I1)),
              {{"predicate", predicate}});
}

// --- arguments ---------------------------------------------------------------

Value *KernelGenerator::int_argument(const std::string &name, Scalar s,
                                     int64_t value) {
  ArgumentSpec spec;
  spec.kind = ArgumentSpec::Kind::Int;
  spec.name = name;
  spec.value = value;
  kernel_.arguments.push_back(spec);
  // The specialization key's divisibility fact, only where it holds.
  int64_t divisibility = value != 0 && value % 16 == 0 ? 16 : 1;
  Value *v = kernel_.function->add_argument(
      Type::scalar(s), ir::ArgumentInfo{name, divisibility});
  double d = static_cast<double>(value);
  facts_.set(v, ValueFacts::range(d, d));
  return v;
}

Value *KernelGenerator::buffer_argument(const std::string &prefix,
                                        const BufferSpec &spec) {
  ArgumentSpec a;
  a.kind = ArgumentSpec::Kind::Buffer;
  a.name = prefix + std::to_string(spec.is_output ? outputs_++ : inputs_++);
  a.buffer = spec;
  kernel_.arguments.push_back(a);
  // The harness allocates every buffer 64-byte aligned.
  Value *v = kernel_.function->add_argument(Type::pointer(spec.dtype),
                                            ir::ArgumentInfo{a.name, 16});
  facts_.set(v, spec.values);
  return v;
}

ValueFacts KernelGenerator::input_values(Scalar s) {
  if (ir::is_float(s)) {
    struct Template {
      double lo, hi;
      int quantum;
    };
    static const std::vector<Template> templates = {
        {-4, 4, -4}, {-1, 1, -6}, {0.5, 8, -3}, {-64, 64, -1}, {-2, 2, -8}};
    Template t = rng_.pick(templates);
    const FloatLimits &l = float_limits(s);
    double m = std::max(std::fabs(t.lo), std::fabs(t.hi));
    // Few enough significant bits that every value is exact in s.
    while (m >= std::ldexp(1.0, t.quantum + l.precision))
      ++t.quantum;
    ValueFacts f = ValueFacts::range(t.lo, t.hi, t.quantum);
    f.special = specials_ && rng_.percent(50);
    return f;
  }
  double lo = integer_min(s), hi = integer_max(s);
  switch (rng_.below(4)) {
  case 0:
    return ValueFacts::range(std::max(lo, -10.0), 10);
  case 1:
    return ValueFacts::range(std::max(lo, -1000.0), std::min(hi, 1000.0));
  case 2:
    return ValueFacts::range(0, std::min(hi, 255.0));
  default:
    return ValueFacts::range(lo, hi); // the whole type: wrap-around
  }
}

// --- prologue ----------------------------------------------------------------

void KernelGenerator::build_prologue() {
  next_line();
  index_type_ = rng_.percent(20) ? Scalar::I64 : Scalar::I32;
  Type index = Type::scalar(index_type_);
  Type i32 = Type::scalar(Scalar::I32);
  // The sizes' names by rank: n; M x N; B x M x N.
  static const char *const size_names[3][3] = {
      {"n"}, {"M", "N"}, {"B", "M", "N"}};
  for (int d = 0; d < layout_.rank; ++d) {
    sizes_[d] = int_argument(size_names[layout_.rank - 1][d], index_type_,
                             layout_.size[d]);
    pid_[d] = make(OpCode::ProgramId, {}, i32, {{"axis", int64_t{d}}});
    add(pid_[d]);
  }
  auto as_index = [&](Value *v) {
    return index_type_ == Scalar::I32 ? v : make(OpCode::Cast, {v}, index);
  };
  // offsets along dimension d: pid * BLOCK + arange(0, BLOCK), sometimes
  // written with an arange that does not start at 0.
  auto range_of = [&](int d) {
    int64_t block = layout_.block[d];
    Type block_type = type_of(index_type_, {block});
    Value *pid = as_index(pid_[d]);
    int64_t start = rng_.percent(20) ? block : 0;
    Value *base = make(OpCode::Mul,
                       {pid, constant(index_type_, {}, double(block))}, index);
    if (start != 0)
      base = make(OpCode::Sub, {base, constant(index_type_, {}, double(start))},
                  index);
    Value *lanes = make(OpCode::Arange, {}, type_of(Scalar::I32, {block}),
                        {{"start", start}, {"end", start + block}});
    if (index_type_ != Scalar::I32)
      lanes = make(OpCode::Cast, {lanes}, block_type);
    // Sometimes with Triton's hints, which hold here: the base is a
    // multiple of the block, the offsets run contiguously over it.
    bool hinted = rng_.percent(30);
    if (hinted)
      base = make(OpCode::MultipleOf, {base}, index,
                  {{"values", std::vector<int64_t>{block}}});
    Value *splat = make(OpCode::Splat, {base}, block_type);
    Value *offsets = rng_.percent(50)
                         ? make(OpCode::Add, {splat, lanes}, block_type)
                         : make(OpCode::Add, {lanes, splat}, block_type);
    if (hinted)
      offsets = make(OpCode::MaxContiguous, {offsets}, block_type,
                     {{"values", std::vector<int64_t>{block}}});
    return offsets;
  };
  auto below = [&](Value *offsets, Value *size) {
    return cmp("lt", offsets, make(OpCode::Splat, {size}, offsets->type()));
  };

  if (layout_.rank == 1) {
    offsets_ = range_of(0);
    mask_ = below(offsets_, sizes_[0]);
    pid_linear_ = pid_[0];
    stride_ = sizes_[0];
  } else if (layout_.rank == 3) {
    std::vector<Value *> ranges, masks;
    for (int d = 0; d < 3; ++d) {
      ranges.push_back(range_of(d));
      masks.push_back(below(ranges.back(), sizes_[d]));
    }
    build_box_prologue(ranges, masks);
  } else {
    rows_ = range_of(0);
    cols_ = range_of(1);
    row_mask_ = below(rows_, sizes_[0]);
    col_mask_ = below(cols_, sizes_[1]);
    Shape main = layout_.main_shape();
    int64_t bm = layout_.block[0], bn = layout_.block[1];
    Type column = type_of(index_type_, {bm, 1});
    Value *row_starts =
        make(OpCode::Mul,
             {make(OpCode::ExpandDims, {rows_}, column, {{"axis", int64_t{1}}}),
              make(OpCode::Splat, {sizes_[1]}, column)},
             column);
    Value *col_offsets =
        make(OpCode::ExpandDims, {cols_}, type_of(index_type_, {1, bn}),
             {{"axis", int64_t{0}}});
    offsets_ = make(
        OpCode::Add,
        {make(OpCode::Broadcast, {row_starts}, type_of(index_type_, main)),
         make(OpCode::Broadcast, {col_offsets}, type_of(index_type_, main))},
        type_of(index_type_, main));
    Type mask_type = type_of(Scalar::I1, main);
    Value *rows_ok = make(OpCode::ExpandDims, {row_mask_},
                          type_of(Scalar::I1, {bm, 1}), {{"axis", int64_t{1}}});
    Value *cols_ok = make(OpCode::ExpandDims, {col_mask_},
                          type_of(Scalar::I1, {1, bn}), {{"axis", int64_t{0}}});
    mask_ = make(OpCode::And,
                 {make(OpCode::Broadcast, {rows_ok}, mask_type),
                  make(OpCode::Broadcast, {cols_ok}, mask_type)},
                 mask_type);
    // pid_m + pid_n * num_programs(0): which chunk of a per-program output
    // this program owns.
    Value *programs_x =
        make(OpCode::NumPrograms, {}, i32, {{"axis", int64_t{0}}});
    pid_linear_ =
        make(OpCode::Add,
             {pid_[0], make(OpCode::Mul, {pid_[1], programs_x}, i32)}, i32);
    stride_ = make(OpCode::Mul, {sizes_[0], sizes_[1]}, index);
    add(rows_);
    add(cols_);
    add(row_mask_);
    add(col_mask_);
  }
  add(offsets_);
  add(mask_);
  // Lanes past the end are masked: loads and stores may go without a mask
  // only when every lane of every program is in bounds.
  all_in_bounds_ = true;
  for (int d = 0; d < layout_.rank; ++d)
    all_in_bounds_ = all_in_bounds_ &&
                     layout_.size[d] % layout_.block[d] == 0 &&
                     layout_.grid[d] * layout_.block[d] == layout_.size[d];
}

void KernelGenerator::build_box_prologue(const std::vector<Value *> &ranges,
                                         const std::vector<Value *> &masks) {
  // Each dimension's range and mask as [BB,1,1], [1,BM,1] or [1,1,BN],
  // broadcast to the box: offsets (b * M + m) * N + n, and the three masks
  // ANDed (a mask from three sources).
  Shape box = layout_.main_shape();
  Type i32 = Type::scalar(Scalar::I32);
  Type index = Type::scalar(index_type_);
  Type box_index = type_of(index_type_, box);
  Value *plane = make(OpCode::Mul, {sizes_[1], sizes_[2]}, index);
  Value *b_part = make(OpCode::Mul,
                       {spread_along(ranges[0], 0, box),
                        make(OpCode::Splat, {plane}, box_index)},
                       box_index);
  Value *m_part = make(OpCode::Mul,
                       {spread_along(ranges[1], 1, box),
                        make(OpCode::Splat, {sizes_[2]}, box_index)},
                       box_index);
  offsets_ = make(OpCode::Add,
                  {make(OpCode::Add, {b_part, m_part}, box_index),
                   spread_along(ranges[2], 2, box)},
                  box_index);
  Type box_mask = type_of(Scalar::I1, box);
  mask_ = make(
      OpCode::And,
      {make(OpCode::And,
            {spread_along(masks[0], 0, box), spread_along(masks[1], 1, box)},
            box_mask),
       spread_along(masks[2], 2, box)},
      box_mask);
  // pid_b + programs_b * (pid_m + programs_m * pid_n): which chunk of a
  // per-program output this program owns.
  auto programs = [&](int axis) {
    return make(OpCode::NumPrograms, {}, i32, {{"axis", int64_t{axis}}});
  };
  Value *inner =
      make(OpCode::Add,
           {pid_[1], make(OpCode::Mul, {programs(1), pid_[2]}, i32)}, i32);
  pid_linear_ =
      make(OpCode::Add, {pid_[0], make(OpCode::Mul, {programs(0), inner}, i32)},
           i32);
  stride_ = make(OpCode::Mul, {sizes_[0], plane}, index);
  for (int d = 0; d < 3; ++d) {
    add(ranges[size_t(d)]);
    add(masks[size_t(d)]);
  }
}

Value *KernelGenerator::load_buffer(Scalar s, int64_t elements, Value *offsets,
                                    Value *mask) {
  BufferSpec spec;
  spec.dtype = s;
  spec.elements = elements;
  spec.values = input_values(s);
  Value *base = buffer_argument("x", spec);
  const Shape shape = offsets->type().shape();
  Type pointers = Type::block(Type::pointer(s), shape);
  Value *addresses =
      make(OpCode::AddPtr, {make(OpCode::Splat, {base}, pointers), offsets},
           pointers);
  std::vector<Value *> operands{addresses};
  bool unmasked = all_in_bounds_ && elements == layout_.elements() &&
                  mask == mask_ && rng_.percent(30);
  if (!unmasked) {
    operands.push_back(mask);
    if (rng_.percent(60)) {
      // `other` fills the masked-off lanes: 0, 1 or an input-like value.
      double other = rng_.pick(std::vector<double>{0, 1, spec.values.lo});
      if (ir::is_float(s) && specials_ && rng_.percent(30))
        other = special_value();
      operands.push_back(constant(s, shape, other));
    }
  }
  ir::Attributes hints;
  if (rng_.percent(10))
    hints["cache"] = std::string(rng_.percent(50) ? "ca" : "cg");
  if (rng_.percent(10))
    hints["eviction"] = std::string("evict_last");
  if (rng_.percent(5))
    hints["volatile"] = int64_t{1};
  return make(OpCode::Load, operands, type_of(s, shape), hints);
}

void KernelGenerator::load_inputs() {
  next_line();
  const std::vector<Scalar> &dtypes = input_dtypes();
  int count = static_cast<int>(rng_.between(1, 3));
  for (int i = 0; i < count; ++i)
    add(load_buffer(rng_.pick(dtypes), layout_.elements(), offsets_, mask_));
  if (layout_.rank == 2) {
    if (rng_.percent(50))
      add(load_buffer(rng_.pick(dtypes), layout_.size[0], rows_, row_mask_));
    if (rng_.percent(50))
      add(load_buffer(rng_.pick(dtypes), layout_.size[1], cols_, col_mask_));
  }
}

// --- outputs -----------------------------------------------------------------

Value *KernelGenerator::chunk_offsets(const Shape &shape) {
  // Program p owns elements [p * numel, (p + 1) * numel) of the output.
  Type i32 = Type::scalar(Scalar::I32);
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  Value *base =
      make(OpCode::Mul, {pid_linear_, constant(Scalar::I32, {}, double(numel))},
           i32);
  if (shape.empty())
    return base;
  // The row-major position of each element: sum of index * stride.
  Type indices = type_of(Scalar::I32, shape);
  Value *local = nullptr;
  int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    Value *term = index_along(shape, d);
    if (stride != 1)
      term =
          make(OpCode::Mul,
               {term, constant(Scalar::I32, shape, double(stride))}, indices);
    local = local ? make(OpCode::Add, {local, term}, indices) : term;
    stride *= shape[static_cast<size_t>(d)];
  }
  return make(OpCode::Add,
              {make(OpCode::Splat, {base}, type_of(Scalar::I32, shape)), local},
              type_of(Scalar::I32, shape));
}

void KernelGenerator::store(Value *v, bool last) {
  next_line();
  const Type &t = v->type();
  Shape shape = t.shape();
  Scalar s = t.element();
  BufferSpec spec;
  spec.dtype = s;
  spec.is_output = true;
  spec.values = facts(v);
  spec.fully_written = true;
  Value *offsets = nullptr, *mask = nullptr;
  bool two_d = layout_.rank == 2;
  Type index = Type::scalar(index_type_);
  auto as_index = [&](Value *x) {
    return index_type_ == Scalar::I32 ? x : make(OpCode::Cast, {x}, index);
  };
  if (shape == layout_.main_shape() && rng_.percent(80)) {
    spec.elements = layout_.elements();
    offsets = offsets_;
    if (!(all_in_bounds_ && rng_.percent(30)))
      mask = mask_;
    if (mask && !last && rng_.percent(25)) {
      // A data-dependent store mask: the other elements stay poisoned.
      Value *condition = operand(Scalar::I1, shape, Need::Any);
      Value *both = make(OpCode::And, {mask, condition}, mask->type());
      if (both) {
        mask = both;
        spec.fully_written = false;
      }
    }
  } else if (two_d && shape == Shape{layout_.block[0]} && rng_.percent(70)) {
    // Row values: out[row * programs_y + pid_y].
    int64_t programs_y = layout_.grid.y;
    spec.elements = layout_.size[0] * programs_y;
    Value *scaled = make(
        OpCode::Mul, {rows_, constant(index_type_, shape, double(programs_y))},
        rows_->type());
    offsets =
        make(OpCode::Add,
             {scaled, make(OpCode::Splat, {as_index(pid_[1])}, rows_->type())},
             rows_->type());
    mask = row_mask_;
  } else if (two_d && shape == Shape{layout_.block[1]} && rng_.percent(70)) {
    // Column values: out[pid_x * N + column].
    spec.elements = layout_.grid.x * layout_.size[1];
    Value *base = make(OpCode::Mul, {as_index(pid_[0]), sizes_[1]}, index);
    offsets =
        make(OpCode::Add, {make(OpCode::Splat, {base}, cols_->type()), cols_},
             cols_->type());
    mask = col_mask_;
  } else {
    int64_t numel = t.num_elements();
    spec.elements = layout_.grid.count() * numel;
    offsets = chunk_offsets(shape);
  }
  if (!offsets)
    return;
  Value *base = buffer_argument("out", spec);
  Value *addresses = base;
  if (!shape.empty()) {
    Type pointers = Type::block(Type::pointer(s), shape);
    addresses = make(OpCode::Splat, {base}, pointers);
  }
  addresses = make(OpCode::AddPtr, {addresses, offsets}, addresses->type());
  std::vector<Value *> operands{addresses, v};
  if (mask)
    operands.push_back(mask);
  b_.create(OpCode::Store, operands, {});
}

void KernelGenerator::store_outputs() {
  std::unordered_set<const Value *> used;
  kernel_.function->walk([&](ir::Operation &op) {
    for (const Value *v : op.operands())
      used.insert(v);
  });
  std::vector<Value *> unused;
  for (size_t i = prologue_end_; i < pool_.size(); ++i)
    if (!used.count(pool_[i]) && !pool_[i]->type().is_pointer())
      unused.push_back(pool_[i]);
  std::vector<Value *> chosen;
  // The latest values carry most of the kernel; a few others join them.
  for (size_t k = 0; k < 2 && !unused.empty(); ++k) {
    chosen.push_back(unused.back());
    unused.pop_back();
  }
  for (int k = 0; k < 2 && !unused.empty(); ++k) {
    size_t i = rng_.below(unused.size());
    chosen.push_back(unused[i]);
    unused.erase(unused.begin() + static_cast<long>(i));
  }
  if (chosen.empty())
    chosen.push_back(pool_.back());
  for (size_t i = 0; i < chosen.size(); ++i)
    store(chosen[i], i + 1 == chosen.size());
}

} // namespace detail

GeneratedKernel generate_kernel(uint64_t seed,
                                const GeneratorOptions &options) {
  return detail::KernelGenerator(seed, options).run();
}

} // namespace blocc::differential
