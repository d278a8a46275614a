// Integer minimum and maximum with a negated operand, in chains the PTX
// assembler fuses (a loop carrying max(x, -pid), a reduction of negated
// values): the assembler of CUDA 13.0 dropped the negation when it fused
// two of them into one three-input instruction on sm_90, so the GPU backend
// hands it compares and selects (integer_min_max_as_selects.h). Every
// signed and unsigned width, minimum and maximum, 1 to 8 warps, against
// the integers a host loop computes.
#include "nvptx/support.h"

#include "backends/nvptx/ptx_min_max_as_selects.h"
#include "ir/parser.h"

#include <regex>

namespace {

using namespace blocc::gpu_testing;

// y[o] = op(op(... op(x[o] * 3, -pid) ..., -pid), x[o] - pid) over `trips`
// iterations, for the offsets o of a 4-element block per program; and
// r[pid] = the op-reduction of -x over the block.
std::string chain_ir(const std::string &type, const std::string &op) {
  std::string text = R"(
func @chain(%x: ptr<ELEM> {divisibility = 16}, %y: ptr<ELEM> {divisibility = 16},
            %r: ptr<ELEM> {divisibility = 16}, %trips: i32) {
  %pid = program_id {axis = 0} : i32
  %four = constant {value = 4} : i32
  %start = mul %pid, %four : i32
  %range = arange {end = 4, start = 0} : tensor<4xi32>
  %starts = splat %start : tensor<4xi32>
  %offs = add %starts, %range : tensor<4xi32>
  %xp = splat %x : tensor<4xptr<ELEM>>
  %xq = addptr %xp, %offs : tensor<4xptr<ELEM>>
  %v = load %xq : tensor<4xELEM>
  %three = constant {value = 3} : tensor<4xELEM>
  %init = mul %v, %three : tensor<4xELEM>
  %p = cast %pid : ELEM
  %zero = constant {value = 0} : ELEM
  %np = sub %zero, %p : ELEM
  %nps = splat %np : tensor<4xELEM>
  %ps = splat %p : tensor<4xELEM>
  %vp = sub %v, %ps : tensor<4xELEM>
  %lb = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %last = for %lb, %trips, %one, %init : tensor<4xELEM> {
  ^(%i: i32, %a: tensor<4xELEM>):
    %b = OP %a, %nps : tensor<4xELEM>
    %c = OP %b, %vp : tensor<4xELEM>
    yield %c
  }
  %yp = splat %y : tensor<4xptr<ELEM>>
  %yq = addptr %yp, %offs : tensor<4xptr<ELEM>>
  store %yq, %last
  %zeros = constant {value = 0} : tensor<4xELEM>
  %nv = sub %zeros, %v : tensor<4xELEM>
  %red = reduce %nv {axis = 0} : ELEM {
  ^(%s: ELEM, %t: ELEM):
    %m = OP %s, %t : ELEM
    yield %m
  }
  %rq = addptr %r, %pid : ptr<ELEM>
  store %rq, %red
  return
}
)";
  text = std::regex_replace(text, std::regex("ELEM"), type);
  return std::regex_replace(text, std::regex("OP"), op);
}

template <typename T> T apply(bool is_max, T a, T b) {
  return is_max ? std::max(a, b) : std::min(a, b);
}

template <typename T>
void expect_chain_matches_host(const std::string &type, bool is_max) {
  const int programs = 7, trips = 3;
  std::string op = is_max ? "maximum" : "minimum";
  SCOPED_TRACE(type + " " + op);
  auto function = ir::parse_function(chain_ir(type, op));
  std::vector<T> x = random_values<T>(programs * 4, 0, 40);
  std::vector<T> want_y(programs * 4), want_r(programs);
  for (int pid = 0; pid < programs; ++pid) {
    T p = static_cast<T>(pid), np = static_cast<T>(T(0) - p);
    for (int i = 0; i < 4; ++i) {
      int o = pid * 4 + i;
      T a = static_cast<T>(x[o] * T(3));
      for (int t = 0; t < trips; ++t)
        a = apply<T>(is_max, apply<T>(is_max, a, np), static_cast<T>(x[o] - p));
      want_y[o] = a;
      T nv = static_cast<T>(T(0) - x[o]);
      want_r[pid] = i == 0 ? nv : apply<T>(is_max, want_r[pid], nv);
    }
  }
  for (int warps : {1, 2, 4, 8}) {
    SCOPED_TRACE(std::to_string(warps) + " warps");
    nvptx::CompileOptions options;
    options.num_warps = warps;
    auto kernel = nvptx::compile(*function, options);
    DeviceBuffer<T> dx(x);
    auto dy = poisoned_on_gpu<T>(programs * 4);
    auto dr = poisoned_on_gpu<T>(programs);
    nvptx::run(*kernel, blocc::Grid(programs),
               {device_arg(dx), device_arg(dy), device_arg(dr),
                KernelArg::of_int(trips)});
    EXPECT_EQ(dy.to_host(), want_y);
    EXPECT_EQ(dr.to_host(), want_r);
  }
}

TEST(GpuIntegerMinMax, NegatedOperandsInFusedChainsGiveTheHostsIntegers) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (bool is_max : {true, false}) {
    expect_chain_matches_host<int16_t>("i16", is_max);
    expect_chain_matches_host<int32_t>("i32", is_max);
    expect_chain_matches_host<int64_t>("i64", is_max);
    expect_chain_matches_host<uint32_t>("u32", is_max);
  }
}

TEST(IntegerMinMaxPtx, NoMinOrMaxInstructionReachesTheAssembler) {
  for (const char *type : {"i16", "i32", "i64", "u32"})
    for (const char *op : {"maximum", "minimum"}) {
      auto function = ir::parse_function(chain_ir(type, op));
      for (int warps : {1, 8})
        expect_ptx_assembles(*function, warps);
      for (const char *arch : {"sm_80", "sm_90"}) {
        std::string ptx = ptx_for(*function, arch);
        SCOPED_TRACE(std::string(type) + " " + op + " " + arch);
        EXPECT_FALSE(std::regex_search(
            ptx, std::regex(R"((min|max)\.[su](16|32|64)\s)")));
        EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(selp\.b(16|32|64))")));
      }
    }
}

// Instruction selection makes min/max of its own (a >= n || b >= n becomes
// max(a, b) >= n): the PTX text is rewritten as well, registers and
// immediates alike; floats, predicated instructions and what is already a
// select stay as they are.
TEST(IntegerMinMaxPtx, MinMaxInstructionsInThePtxTextBecomeSelects) {
  std::string ptx = "\tmax.s32 \t%r38, %r37, %r19;\n"
                    "\tmin.u16 \t%rs1, %rs2, 7;\n"
                    "\tmax.s64 \t%rd58, %rd2, -3;\n"
                    "\tmax.f32 \t%f1, %f2, %f3;\n"
                    "\t{ .reg .pred %p; setp.gt.s32 %p, %r1, %r2; selp.b32 "
                    "%r3, %r1, %r2, %p; }\n";
  EXPECT_EQ(nvptx::rewrite_ptx_min_max_as_selects(ptx),
            "\t{ .reg .pred %p; setp.gt.s32 %p, %r37, %r19; selp.b32 %r38, "
            "%r37, %r19, %p; }\n"
            "\t{ .reg .pred %p; setp.lt.u16 %p, %rs2, 7; selp.b16 %rs1, %rs2, "
            "7, %p; }\n"
            "\t{ .reg .pred %p; setp.gt.s64 %p, %rd2, -3; selp.b64 %rd58, "
            "%rd2, -3, %p; }\n"
            "\tmax.f32 \t%f1, %f2, %f3;\n"
            "\t{ .reg .pred %p; setp.gt.s32 %p, %r1, %r2; selp.b32 %r3, %r1, "
            "%r2, %p; }\n");
}

} // namespace
