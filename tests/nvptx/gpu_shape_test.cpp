// Shape ops on the GPU: reshape (between ranks 1 to 3, including shapes
// whose layouts let every thread keep its elements and transposed ones
// that go through shared memory), permute (every order of a 3-D block,
// 2-D transposes of tiles), join, split (to blocks and to scalars), cat,
// and whole-block reductions of 2-D and 3-D blocks (which flatten them),
// for f32, f16, i8, f64 and i32 elements. They only move elements, so the
// GPU's results must equal the CPU backend's bit for bit, and a host
// rearrangement of the inputs; outputs are poisoned first and the valid
// count n masks loads and stores (1, primes, not multiples of the block).
// The PTX of every case is ptxas-assembled for sm_80 and sm_90 without a
// GPU; the GPU runs skip (reported as skipped) where no GPU is present.
#include "nvptx/support.h"

#include <regex>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

using Dims = std::vector<int64_t>;

/// A shape as one Const<int>: four bits per dimension (log2 + 1).
int code_of(const Dims &shape) {
  int code = 0;
  for (int64_t d : shape) {
    int bits = 0;
    while ((int64_t{1} << bits) < d)
      ++bits;
    code = code * 16 + bits + 1;
  }
  return code;
}

Dims shape_of(int code) {
  Dims shape;
  for (; code; code /= 16)
    shape.insert(shape.begin(), int64_t{1} << (code % 16 - 1));
  return shape;
}

int64_t count(const Dims &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A block of `shape` (rank 1 to 3) whose elements are their row-major
/// positions, built from aranges (no shape op but expand_dims).
bl::Tensor positions(const Dims &shape) {
  const int rank = static_cast<int>(shape.size());
  auto along = [&](int d) {
    bl::Tensor t = bl::arange(0, static_cast<int>(shape[d]));
    for (int e = 0; e < d; ++e)
      t = bl::expand_dims(t, 0);
    for (int e = d + 1; e < rank; ++e)
      t = bl::expand_dims(t, -1);
    return t;
  };
  bl::Tensor flat = along(0);
  for (int d = 1; d < rank; ++d)
    flat = flat * static_cast<int>(shape[d]) + along(d);
  return flat;
}

std::vector<int> order_of(int code) {
  std::vector<int> order;
  for (; code; code /= 10)
    order.insert(order.begin(), code % 10 - 1);
  return order;
}

int code_of_order(const std::vector<int> &order) {
  int code = 0;
  for (int d : order)
    code = code * 10 + d + 1;
  return code;
}

// ----------------------------------------------------------- kernels
// out (shape TO) = x (shape FROM) reshaped; elements at or past n masked.
template <typename T> auto &reshaped() {
  static auto k =
      bl::kernel("reshaped", [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 n,
                                bl::Const<int> FROM, bl::Const<int> TO) {
        auto in = positions(shape_of(FROM));
        auto v = bl::load(x + in, in < n);
        auto at = positions(shape_of(TO));
        bl::store(out + at, bl::reshape(v, shape_of(TO)), at < n);
      });
  return k;
}

// out = permute(x, ORDER) at its own row-major positions, and flat = the
// same flattened to 1-D (a reshape of a permuted value); the mask is
// permuted with the data.
template <typename T> auto &permuted() {
  static auto k = bl::kernel(
      "permuted", [](bl::Ptr<T> x, bl::Ptr<T> out, bl::Ptr<T> flat, bl::i32 n,
                     bl::Const<int> FROM, bl::Const<int> ORDER) {
        Dims from = shape_of(FROM), to;
        std::vector<int> order = order_of(ORDER);
        for (int d : order)
          to.push_back(from[d]);
        auto in = positions(from);
        auto mask = in < n;
        auto p = bl::permute(bl::load(x + in, mask), order);
        auto pmask = bl::permute(mask, order);
        bl::store(out + positions(to), p, pmask);
        auto line = bl::arange(0, static_cast<int>(count(from)));
        bl::store(flat + line, bl::reshape(p, {count(from)}),
                  bl::reshape(pmask, {count(from)}));
      });
  return k;
}

// out (SHAPE + [2]) = join(a, b).
template <typename T> auto &joined() {
  static auto k =
      bl::kernel("joined", [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<T> out,
                              bl::i32 n, bl::Const<int> SHAPE) {
        Dims shape = shape_of(SHAPE);
        auto in = positions(shape);
        auto mask = in < n;
        auto pair = bl::join(bl::load(a + in, mask), bl::load(b + in, mask));
        shape.push_back(2);
        bl::store(out + positions(shape), pair, bl::join(mask, mask));
      });
  return k;
}

// even, odd = split(x) for x of SHAPE (last dimension 2).
template <typename T> auto &split_halves() {
  static auto k = bl::kernel("split_halves", [](bl::Ptr<T> x, bl::Ptr<T> even,
                                                bl::Ptr<T> odd, bl::i32 n,
                                                bl::Const<int> SHAPE) {
    Dims shape = shape_of(SHAPE);
    auto in = positions(shape);
    auto [e, o] = bl::split(bl::load(x + in, in < 2 * n));
    shape.pop_back();
    auto at = positions(shape);
    bl::store(even + at, e, at < n);
    bl::store(odd + at, o, at < n);
  });
  return k;
}

// out = cat(a, b) along the first dimension.
template <typename T> auto &concatenated() {
  static auto k =
      bl::kernel("concatenated", [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<T> out,
                                    bl::i32 n, bl::Const<int> SHAPE) {
        Dims shape = shape_of(SHAPE);
        auto in = positions(shape);
        auto mask = in < n;
        auto both = bl::cat(bl::load(a + in, mask), bl::load(b + in, mask));
        shape[0] *= 2;
        bl::store(out + positions(shape), both, bl::cat(mask, mask));
      });
  return k;
}

// Whole-block reductions (the block is flattened first).
auto whole_block = bl::kernel(
    "whole_block", [](bl::Ptr<float> x, bl::Ptr<int32_t> k, bl::Ptr<float> f,
                      bl::Ptr<int32_t> i, bl::i32 n, bl::Const<int> SHAPE) {
      auto in = positions(shape_of(SHAPE));
      auto mask = in < n;
      auto v = bl::load(x + in, mask, 0.f);
      auto kv = bl::load(k + in, mask, 0);
      bl::store(f, bl::sum(v));
      bl::store(f + 1, bl::max(bl::where(mask, v, -INFINITY)));
      bl::store(f + 2, bl::min(bl::where(mask, v, INFINITY)));
      bl::store(f + 3, bl::prod(bl::where(mask, 1.f + v * 0.01f, 1.f)));
      bl::store(i, bl::sum(kv));
      bl::store(i + 1, bl::xor_sum(kv));
      bl::store(i + 2, bl::max(bl::where(mask, kv, -1000000)));
      bl::store(i + 3, bl::sum(bl::where(mask, in, 0)));
    });

// A pair of scalars: join them, split them back.
auto scalar_pair =
    bl::kernel("scalar_pair", [](bl::Ptr<double> x, bl::Ptr<double> out) {
      auto s0 = bl::load(x), s1 = bl::load(x + 1);
      auto pair = bl::join(s1, s0);
      bl::store(out + bl::arange(0, 2), pair);
      auto [first, second] = bl::split(pair);
      bl::store(out + 2, first);
      bl::store(out + 3, second - first);
    });

// ------------------------------------------------------------ cases
struct ReshapeCase {
  Dims from, to;
  int warps;
};
const std::vector<ReshapeCase> kReshapes = {
    {{8, 16}, {128}, 4},    {{128}, {8, 16}, 4},    {{4, 64}, {16, 16}, 4},
    {{2, 4, 8}, {8, 8}, 4}, {{64}, {2, 4, 8}, 2},   {{16, 2}, {32}, 4},
    {{1, 32}, {4, 8}, 1},   {{32, 32}, {1024}, 8},  {{256, 4}, {4, 16, 16}, 4},
    {{2, 2}, {4}, 4},       {{4, 1024}, {4096}, 4}, {{512}, {2, 256}, 1},
};

struct PermuteCase {
  Dims from;
  std::vector<int> order;
  int warps;
};
const std::vector<PermuteCase> kPermutes = {
    {{8, 16}, {1, 0}, 4},
    {{32, 4}, {1, 0}, 4},
    {{1, 64}, {1, 0}, 2},
    {{64, 64}, {1, 0}, 4},
    {{2, 4, 8}, {0, 2, 1}, 4},
    {{2, 4, 8}, {1, 0, 2}, 4},
    {{2, 4, 8}, {1, 2, 0}, 4},
    {{2, 4, 8}, {2, 0, 1}, 1},
    {{2, 4, 8}, {2, 1, 0}, 8},
    {{4, 1, 16}, {2, 0, 1}, 4},
    {{16, 8, 4}, {2, 1, 0}, 4},
    // Converted through more than 48 KB of (dynamic) shared memory.
    {{128, 128}, {1, 0}, 8},
};

struct ShapeCase {
  Dims shape;
  int warps;
};
// Operands of join and cat.
const std::vector<ShapeCase> kPairs = {
    {{1}, 4},      {{16}, 4},     {{128}, 1},   {{4, 8}, 4},
    {{32, 64}, 8}, {{2, 512}, 4}, {{64, 1}, 2},
};
// Operands of split (last dimension 2).
const std::vector<ShapeCase> kSplits = {
    {{1, 2}, 4},    {{16, 2}, 4}, {{256, 2}, 8},
    {{4, 8, 2}, 4}, {{64, 2}, 1}, {{8, 32, 2}, 4},
};
const std::vector<ShapeCase> kWholeBlocks = {
    {{8, 16}, 4},   {{2, 2}, 4},   {{64, 64}, 4}, {{4, 1024}, 8},
    {{2, 4, 8}, 2}, {{256, 2}, 4}, {{1, 128}, 1},
};

std::string label(const Dims &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

/// Valid counts for a block of `size`: one, a prime, and all of it.
std::vector<int> counts_for(int64_t size) {
  std::vector<int> ns{1};
  for (int p : {3, 13, 61, 251, 1021, 4093})
    if (p < size) {
      ns.push_back(p);
      break;
    }
  if (size > 1)
    ns.push_back(static_cast<int>(size));
  return ns;
}

template <typename T> std::vector<T> elements(size_t n) {
  return random_values<T>(n, -100, 100);
}

template <typename T> class ShapePtx : public ::testing::Test {};
template <typename T> class GpuShape : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, bl::half, int8_t, double, int32_t>;
TYPED_TEST_SUITE(ShapePtx, ElementTypes);
TYPED_TEST_SUITE(GpuShape, ElementTypes);

// --------------------------------------------------- PTX, no GPU needed
TYPED_TEST(ShapePtx, EveryCaseAssembles) {
  using T = TypeParam;
  std::vector<T> h;
  for (const ReshapeCase &c : kReshapes) {
    SCOPED_TRACE("reshape " + label(c.from) + " -> " + label(c.to));
    expect_ptx_assembles(
        specialization(reshaped<T>(), h, h, 7, code_of(c.from), code_of(c.to)),
        c.warps);
  }
  for (const PermuteCase &c : kPermutes) {
    SCOPED_TRACE("permute " + label(c.from));
    expect_ptx_assembles(specialization(permuted<T>(), h, h, h, 7,
                                        code_of(c.from),
                                        code_of_order(c.order)),
                         c.warps);
  }
  for (const ShapeCase &c : kPairs) {
    SCOPED_TRACE("join/cat " + label(c.shape));
    expect_ptx_assembles(
        specialization(joined<T>(), h, h, h, 7, code_of(c.shape)), c.warps);
    expect_ptx_assembles(
        specialization(concatenated<T>(), h, h, h, 7, code_of(c.shape)),
        c.warps);
  }
  for (const ShapeCase &c : kSplits) {
    SCOPED_TRACE("split " + label(c.shape));
    expect_ptx_assembles(
        specialization(split_halves<T>(), h, h, h, 7, code_of(c.shape)),
        c.warps);
  }
}

TEST(ShapePtx, WholeBlockReductionsAndScalarPairsAssemble) {
  std::vector<float> f;
  std::vector<int32_t> i;
  for (const ShapeCase &c : kWholeBlocks) {
    SCOPED_TRACE(label(c.shape));
    expect_ptx_assembles(
        specialization(whole_block, f, i, f, i, 7, code_of(c.shape)), c.warps);
  }
  std::vector<double> d;
  expect_ptx_assembles(specialization(scalar_pair, d, d));
}

int matches(const std::string &text, const std::string &pattern) {
  std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                    std::sregex_iterator()));
}

TEST(ShapePtx, FlatteningAnAnchoredTileMovesNoData) {
  // A 64 x 64 tile loaded 16 bytes per thread access and flattened for a
  // whole-block sum: every thread reduces the elements it loaded; the only
  // shared memory is the warps' partial sums (one barrier).
  std::vector<float> x(4096);
  auto flat_sum =
      bl::kernel("flat_sum", [](bl::Ptr<float> x, bl::Ptr<float> out) {
        auto in = positions({64, 64});
        bl::store(out, bl::sum(bl::load(x + in)));
      });
  std::string sum_ptx = ptx_for(specialization(flat_sum, x, x));
  EXPECT_EQ(matches(sum_ptx, R"(bar\.sync)"), 1) << sum_ptx;
  EXPECT_EQ(matches(sum_ptx, R"(ld\.global\.v4\.f32)"), 8) << sum_ptx;
  // join, split and cat: in registers.
  std::vector<float> h(4096);
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string join_ptx = ptx_for(
        specialization(joined<float>(), h, h, h, 7, code_of({128})), arch);
    std::string split_ptx = ptx_for(
        specialization(split_halves<float>(), h, h, h, 7, code_of({128, 2})),
        arch);
    std::string cat_ptx = ptx_for(
        specialization(concatenated<float>(), h, h, h, 7, code_of({4, 8})),
        arch);
    for (const std::string *p : {&join_ptx, &split_ptx, &cat_ptx})
      EXPECT_EQ(matches(*p, R"(\.shared)"), 0) << *p;
  }
}

TEST(ShapePtx, TransposedTilesAreLoadedCoalescedAndConvertedOnce) {
  // A 64 x 64 f32 tile transposed: loaded in its own layout (vector
  // accesses along rows), converted through shared memory once.
  std::vector<float> h(4096);
  std::string ptx = ptx_for(specialization(
      permuted<float>(), h, h, h, 7, code_of({64, 64}), code_of_order({1, 0})));
  EXPECT_GT(matches(ptx, R"(ld\.global\.v4\.f32)"), 0) << ptx;
  EXPECT_GT(matches(ptx, R"(st\.shared)"), 0) << ptx;
}

int too_big_line = 0;
auto too_big =
    bl::kernel("too_big", [](bl::Ptr<double> x, bl::Ptr<double> out) {
      auto line = bl::arange(0, 32768);
      auto v = bl::load(x + line);
      too_big_line = __LINE__ + 1;
      auto tile = bl::reshape(v, {128, 256});
      bl::store(out + positions({256, 128}), bl::trans(tile));
    });

TEST(ShapePtx, SharedMemoryBeyondTheArchitectureNamesTheReshape) {
  // A row of 32768 f64 transposed while reshaped goes through 264 KB of
  // shared memory, more than sm_80 (163 KB) or sm_90 (227 KB) allows.
  std::vector<double> h;
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string message =
        error_of([&] { ptx_for(specialization(too_big, h, h), arch); });
    EXPECT_THAT(message, ::testing::HasSubstr("reshape at gpu_shape_test.cpp:" +
                                              std::to_string(too_big_line)));
    EXPECT_THAT(message, ::testing::HasSubstr("bytes of shared memory"));
    EXPECT_THAT(message, ::testing::HasSubstr(arch));
  }
}

// ------------------------------------------------------ on the GPU
template <typename T>
void expect_matches(const std::vector<T> &gpu, const std::vector<T> &cpu,
                    const std::vector<T> &want) {
  EXPECT_TRUE(same_bits(gpu, cpu));
  EXPECT_TRUE(same_bits(gpu, want));
}

TYPED_TEST(GpuShape, ReshapeKeepsRowMajorOrder) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  using T = TypeParam;
  for (const ReshapeCase &c : kReshapes) {
    int64_t size = count(c.from);
    for (int n : counts_for(size)) {
      SCOPED_TRACE(label(c.from) + " -> " + label(c.to) +
                   ", n = " + std::to_string(n));
      auto x = elements<T>(size);
      DeviceBuffer<T> dx(x);
      auto dout = poisoned_on_gpu<T>(size);
      reshaped<T>()[{1}].with(on(Backend::Gpu, c.warps))(
          dx, dout, n, code_of(c.from), code_of(c.to));
      auto cpu = poisoned<T>(size);
      reshaped<T>()[{1}].with(kCpu)(x, cpu, n, code_of(c.from), code_of(c.to));
      auto want = poisoned<T>(size);
      std::copy(x.begin(), x.begin() + n, want.begin());
      expect_matches(dout.to_host(), cpu, want);
    }
  }
}

TYPED_TEST(GpuShape, PermuteMovesEveryDimension) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  using T = TypeParam;
  for (const PermuteCase &c : kPermutes) {
    int64_t size = count(c.from);
    Dims to;
    for (int d : c.order)
      to.push_back(c.from[d]);
    for (int n : counts_for(size)) {
      SCOPED_TRACE(label(c.from) + " order " +
                   std::to_string(code_of_order(c.order)) +
                   ", n = " + std::to_string(n));
      auto x = elements<T>(size);
      DeviceBuffer<T> dx(x);
      auto dout = poisoned_on_gpu<T>(size), dflat = poisoned_on_gpu<T>(size);
      permuted<T>()[{1}].with(on(Backend::Gpu, c.warps))(
          dx, dout, dflat, n, code_of(c.from), code_of_order(c.order));
      auto cpu = poisoned<T>(size), cpu_flat = poisoned<T>(size);
      permuted<T>()[{1}].with(kCpu)(x, cpu, cpu_flat, n, code_of(c.from),
                                    code_of_order(c.order));
      // want[j] for the permuted position j: the operand element whose
      // index along dimension order[i] is j's index along i.
      auto want = poisoned<T>(size);
      for (int64_t j = 0; j < size; ++j) {
        std::vector<int64_t> index(to.size()), source(to.size());
        for (int64_t rest = j, d = static_cast<int64_t>(to.size()) - 1; d >= 0;
             --d) {
          index[d] = rest % to[d];
          rest /= to[d];
        }
        for (size_t i = 0; i < c.order.size(); ++i)
          source[c.order[i]] = index[i];
        int64_t flat = 0;
        for (size_t d = 0; d < c.from.size(); ++d)
          flat = flat * c.from[d] + source[d];
        if (flat < n)
          want[j] = x[flat];
      }
      expect_matches(dout.to_host(), cpu, want);
      expect_matches(dflat.to_host(), cpu_flat, want);
    }
  }
}

TYPED_TEST(GpuShape, JoinInterleavesAndCatAppends) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  using T = TypeParam;
  for (const ShapeCase &c : kPairs) {
    int64_t size = count(c.shape);
    for (int n : counts_for(size)) {
      SCOPED_TRACE(label(c.shape) + ", n = " + std::to_string(n));
      auto a = elements<T>(size), b = elements<T>(size);
      DeviceBuffer<T> da(a), db(b);
      auto djoin = poisoned_on_gpu<T>(2 * size);
      auto dcat = poisoned_on_gpu<T>(2 * size);
      joined<T>()[{1}].with(on(Backend::Gpu, c.warps))(da, db, djoin, n,
                                                       code_of(c.shape));
      concatenated<T>()[{1}].with(on(Backend::Gpu, c.warps))(da, db, dcat, n,
                                                             code_of(c.shape));
      auto cpu_join = poisoned<T>(2 * size), cpu_cat = poisoned<T>(2 * size);
      joined<T>()[{1}].with(kCpu)(a, b, cpu_join, n, code_of(c.shape));
      concatenated<T>()[{1}].with(kCpu)(a, b, cpu_cat, n, code_of(c.shape));
      auto want_join = poisoned<T>(2 * size), want_cat = poisoned<T>(2 * size);
      for (int i = 0; i < n; ++i) {
        want_join[2 * i] = a[i];
        want_join[2 * i + 1] = b[i];
        want_cat[i] = a[i];
        want_cat[size + i] = b[i];
      }
      expect_matches(djoin.to_host(), cpu_join, want_join);
      expect_matches(dcat.to_host(), cpu_cat, want_cat);
    }
  }
}

TYPED_TEST(GpuShape, SplitDeinterleaves) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  using T = TypeParam;
  for (const ShapeCase &c : kSplits) {
    int64_t half = count(c.shape) / 2;
    for (int n : counts_for(half)) {
      SCOPED_TRACE(label(c.shape) + ", n = " + std::to_string(n));
      auto x = elements<T>(2 * half);
      DeviceBuffer<T> dx(x);
      auto deven = poisoned_on_gpu<T>(half), dodd = poisoned_on_gpu<T>(half);
      split_halves<T>()[{1}].with(on(Backend::Gpu, c.warps))(dx, deven, dodd, n,
                                                             code_of(c.shape));
      auto even = poisoned<T>(half), odd = poisoned<T>(half);
      split_halves<T>()[{1}].with(kCpu)(x, even, odd, n, code_of(c.shape));
      auto want_even = poisoned<T>(half), want_odd = poisoned<T>(half);
      for (int i = 0; i < n; ++i) {
        want_even[i] = x[2 * i];
        want_odd[i] = x[2 * i + 1];
      }
      expect_matches(deven.to_host(), even, want_even);
      expect_matches(dodd.to_host(), odd, want_odd);
    }
  }
}

TEST(GpuShape, WholeBlockReductionsOfFlattenedBlocks) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (const ShapeCase &c : kWholeBlocks) {
    int64_t size = count(c.shape);
    for (int n : counts_for(size)) {
      SCOPED_TRACE(label(c.shape) + ", n = " + std::to_string(n));
      auto x = random_values<float>(size, -10, 10);
      // Few distinct integers: the largest one meets ties.
      auto k = random_values<int32_t>(size, -20, 20);
      DeviceBuffer<float> dx(x);
      DeviceBuffer<int32_t> dk(k);
      auto df = poisoned_on_gpu<float>(4);
      auto di = poisoned_on_gpu<int32_t>(4);
      whole_block[{1}].with(on(Backend::Gpu, c.warps))(dx, dk, df, di, n,
                                                       code_of(c.shape));
      auto f = poisoned<float>(4);
      auto i = poisoned<int32_t>(4);
      whole_block[{1}].with(kCpu)(x, k, f, i, n, code_of(c.shape));
      double sum = 0, prod = 1, hi = -INFINITY, lo = INFINITY;
      int32_t k_sum = 0, k_xor = 0, k_max = -1000000, positions_sum = 0;
      for (int j = 0; j < n; ++j) {
        sum += x[j];
        prod *= double(1.f + x[j] * 0.01f);
        hi = std::max<double>(hi, x[j]);
        lo = std::min<double>(lo, x[j]);
        k_sum += k[j];
        k_xor ^= k[j];
        k_max = std::max(k_max, k[j]);
        positions_sum += j;
      }
      std::vector<float> gf = df.to_host();
      std::vector<int32_t> gi = di.to_host();
      // Float sums and products combine in another order than the CPU's.
      EXPECT_NEAR(gf[0], sum, 1e-5 * (1 + n) * 10);
      EXPECT_NEAR(gf[0], f[0], 1e-5 * (1 + n) * 10);
      EXPECT_NEAR(gf[3], prod, 1e-5 * n * std::abs(prod));
      EXPECT_EQ(gf[1], float(hi));
      EXPECT_EQ(gf[2], float(lo));
      EXPECT_EQ(gf[1], f[1]);
      EXPECT_EQ(gf[2], f[2]);
      EXPECT_EQ(gi, (std::vector<int32_t>{k_sum, k_xor, k_max, positions_sum}));
      EXPECT_EQ(gi, i);
    }
  }
}

TEST(GpuShape, ScalarPairsJoinAndSplit) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  auto x = random_values<double>(2, -100, 100);
  DeviceBuffer<double> dx(x);
  auto dout = poisoned_on_gpu<double>(4);
  scalar_pair[{1}](dx, dout);
  auto cpu = poisoned<double>(4);
  scalar_pair[{1}].with(kCpu)(x, cpu);
  std::vector<double> want{x[1], x[0], x[1], x[0] - x[1]};
  expect_matches(dout.to_host(), cpu, want);
}

} // namespace
