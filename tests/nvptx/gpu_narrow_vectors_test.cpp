// Bytes that travel in pairs: values that LLVM could hold as a <2 x i8>, a
// vector its NVPTX target keeps in no register and moves through a stack
// slot (local memory). Two ways a kernel made one:
//  - the SLP vectorizer packing a loop's carried i8 block (a random kernel
//    whose shift amounts, computed from a scan, read back as 0 on an
//    H100), which the GPU pipeline no longer runs;
//  - the memory lowering unpacking a two-byte group of i8 lanes (a masked
//    load or store of two bytes per thread), now done with shifts.
// The PTX of both kernels must use no local memory (ptx_assembly_errors
// checks every kernel the GPU tests compile), and on the GPU both must
// give the exact integers a host loop computes, with 1, 2, 4 and 8 warps.
#include "nvptx/support.h"

#include "ir/parser.h"

namespace {

using namespace blocc::gpu_testing;

// out_shift[o] = int8(pid) << (int8(cumsum(o)) & 7), and out_loop[o] (for o
// < n) the value shr(int8(cumsum(o)), same amount) doubled and clamped to
// [0, 32] `trips` times, for the offsets o = pid * 4 + arange(4).
constexpr const char *kCarriedBytes = R"(
func @carried_bytes(%n: i32, %trips: i64, %out_loop: ptr<i8> {divisibility = 16},
                    %out_shift: ptr<i8> {divisibility = 16}) {
  %pid = program_id {axis = 0} : i32
  %four = constant {value = 4} : i32
  %start = mul %pid, %four : i32
  %range = arange {end = 4, start = 0} : tensor<4xi32>
  %starts = splat %start : tensor<4xi32>
  %offs = add %starts, %range : tensor<4xi32>
  %ns = splat %n : tensor<4xi32>
  %mask = cmp %offs, %ns {predicate = "lt"} : tensor<4xi1>
  %sums = scan %offs {axis = 0, reverse = 0} : tensor<4xi32> {
  ^(%a: i32, %b: i32):
    %s = add %a, %b : i32
    yield %s
  }
  %pids = splat %pid : tensor<4xi32>
  %pid8 = cast %pids : tensor<4xi8>
  %sums8 = cast %sums : tensor<4xi8>
  %seven = constant {value = 7} : tensor<4xi8>
  %amount = and %sums8, %seven : tensor<4xi8>
  %shifted = shl %pid8, %amount : tensor<4xi8>
  %init = shr %sums8, %amount : tensor<4xi8>
  %zero64 = constant {value = 0} : i64
  %one64 = constant {value = 1} : i64
  %last = for %zero64, %trips, %one64, %init : tensor<4xi8> {
  ^(%i: i64, %v: tensor<4xi8>):
    %twice = add %v, %v : tensor<4xi8>
    %zero = constant {value = 0} : tensor<4xi8>
    %low = maximum %twice, %zero : tensor<4xi8>
    %cap = constant {value = 32} : tensor<4xi8>
    %high = minimum %low, %cap : tensor<4xi8>
    yield %high
  }
  %lp = splat %out_loop : tensor<4xptr<i8>>
  %lq = addptr %lp, %offs : tensor<4xptr<i8>>
  store %lq, %last, %mask
  %sp = splat %out_shift : tensor<4xptr<i8>>
  %sq = addptr %sp, %offs : tensor<4xptr<i8>>
  store %sq, %shifted
  return
}
)";

// y[o] = x[o] * 3 - 1 for o < n (x[o] = -128 elsewhere, unstored), in
// blocks of two bytes: the tail block's group straddles n.
constexpr const char *kBytePairs = R"(
func @byte_pairs(%x: ptr<i8> {divisibility = 16}, %y: ptr<i8> {divisibility = 16}, %n: i32) {
  %pid = program_id {axis = 0} : i32
  %two = constant {value = 2} : i32
  %start = mul %pid, %two : i32
  %range = arange {end = 2, start = 0} : tensor<2xi32>
  %starts = splat %start : tensor<2xi32>
  %offs = add %starts, %range : tensor<2xi32>
  %ns = splat %n : tensor<2xi32>
  %mask = cmp %offs, %ns {predicate = "lt"} : tensor<2xi1>
  %xp = splat %x : tensor<2xptr<i8>>
  %xq = addptr %xp, %offs : tensor<2xptr<i8>>
  %other = constant {value = -128} : tensor<2xi8>
  %v = load %xq, %mask, %other : tensor<2xi8>
  %three = constant {value = 3} : tensor<2xi8>
  %one = constant {value = 1} : tensor<2xi8>
  %t = mul %v, %three : tensor<2xi8>
  %w = sub %t, %one : tensor<2xi8>
  %yp = splat %y : tensor<2xptr<i8>>
  %yq = addptr %yp, %offs : tensor<2xptr<i8>>
  store %yq, %w, %mask
  return
}
)";

TEST(NarrowVectorsPtx, BytePairsUseNoLocalMemoryAndAssemble) {
  for (const char *text : {kCarriedBytes, kBytePairs})
    for (int warps : {1, 2, 4, 8}) {
      auto function = ir::parse_function(text);
      SCOPED_TRACE(function->name() + " with " + std::to_string(warps) +
                   " warps");
      // For sm_80 and sm_90, with no local memory (local_memory_errors).
      expect_ptx_assembles(*function, warps);
    }
}

TEST(GpuNarrowVectors, CarriedBytesGiveTheHostsIntegers) {
  BLOCC_REQUIRE_GPU();
  const int programs = 5, n = 18;
  const int64_t trips = 3;
  std::vector<int8_t> want_loop(programs * 4, poison<int8_t>());
  std::vector<int8_t> want_shift(programs * 4);
  for (int pid = 0; pid < programs; ++pid) {
    int32_t sum = 0;
    for (int i = 0; i < 4; ++i) {
      int32_t o = pid * 4 + i;
      sum += o;
      int8_t amount = static_cast<int8_t>(static_cast<int8_t>(sum) & 7);
      want_shift[o] = static_cast<int8_t>(static_cast<int8_t>(pid) << amount);
      int8_t v = static_cast<int8_t>(static_cast<int8_t>(sum) >> amount);
      for (int64_t t = 0; t < trips; ++t)
        v = static_cast<int8_t>(
            std::min<int>(std::max<int>(static_cast<int8_t>(v + v), 0), 32));
      if (o < n)
        want_loop[o] = v;
    }
  }
  auto function = ir::parse_function(kCarriedBytes);
  for (int warps : {1, 2, 4, 8}) {
    SCOPED_TRACE(std::to_string(warps) + " warps");
    nvptx::CompileOptions options;
    options.num_warps = warps;
    auto kernel = nvptx::compile(*function, options);
    auto loop = poisoned_on_gpu<int8_t>(programs * 4);
    auto shift = poisoned_on_gpu<int8_t>(programs * 4);
    nvptx::run(*kernel, blocc::Grid(programs),
               {blocc::KernelArg::of_int(n), blocc::KernelArg::of_int(trips),
                device_arg(loop), device_arg(shift)});
    EXPECT_EQ(loop.to_host(), want_loop);
    EXPECT_EQ(shift.to_host(), want_shift);
  }
}

TEST(GpuNarrowVectors, BytePairsWithAMaskedTailGiveTheHostsIntegers) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  auto function = ir::parse_function(kBytePairs);
  for (int n : {1, 2, 7, 33})
    for (int warps : {1, 2, 4, 8}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", " + std::to_string(warps) +
                   " warps");
      nvptx::CompileOptions options;
      options.num_warps = warps;
      auto kernel = nvptx::compile(*function, options);
      const int programs = (n + 1) / 2 + 1; // one program past the end
      std::vector<int8_t> x = random_values<int8_t>(programs * 2, -128, 127);
      std::vector<int8_t> want(programs * 2, poison<int8_t>());
      for (int o = 0; o < n; ++o)
        want[o] = static_cast<int8_t>(x[o] * 3 - 1);
      DeviceBuffer<int8_t> dx(x);
      auto dy = poisoned_on_gpu<int8_t>(programs * 2);
      nvptx::run(*kernel, blocc::Grid(programs),
                 {device_arg(dx), device_arg(dy), blocc::KernelArg::of_int(n)});
      EXPECT_EQ(dy.to_host(), want);
    }
}

} // namespace
