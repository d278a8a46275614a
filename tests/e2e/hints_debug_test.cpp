// Hints and run-time debugging end to end: bl::multiple_of /
// bl::max_contiguous / bl::max_constancy reach the axis-info analysis (and
// change no value), bl::device_print writes one line per element, and a
// failing bl::device_assert stops the launch with a message naming the
// kernel, program, line and lane.
#include "e2e/support.h"
#include "ir/axis_info.h"
#include "ir/error.h"
#include "ir/parser.h"

#include <gmock/gmock.h>

#include <bit>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace bl = blocc;
namespace ir = blocc::ir;
using namespace blocc::testing;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// ------------------------------------------------------------------ hints
// Copies BLOCK elements from x[starts[p]] for each program p. Nothing in
// the IR tells the compiler that starts[p] is a multiple of 16: the hint
// does, and with arange the offsets become contiguous 16-aligned runs.
// Two 2-D int blocks loaded through block pointers get per-dimension facts
// (true of the data the tests pass: a hint is a promise).
auto hinted = bl::kernel("hinted", [](bl::Ptr<int32_t> starts, bl::Ptr<float> x,
                                      bl::Ptr<float> out,
                                      bl::Ptr<int32_t> cells,
                                      bl::Ptr<int32_t> cells_out,
                                      bl::Ptr<int32_t> ramps,
                                      bl::Ptr<int32_t> ramps_out,
                                      bl::Const<int> BLOCK) {
  auto pid = bl::program_id(0);
  auto start = bl::multiple_of(bl::load(starts + pid), 48); // 48 = 16 * 3
  auto offs = start + bl::arange(0, BLOCK);
  auto dst = pid * BLOCK + bl::arange(0, BLOCK);
  bl::store(out + dst, bl::load(x + offs));

  auto tile = [](bl::Ptr<int32_t> base) {
    return bl::make_block_ptr(base, {8, 16}, {16, 1}, {0, 0}, {8, 16}, {1, 0});
  };
  // Equal in 2 x 4 patches, every one a multiple of 8 (one value for both
  // dimensions).
  auto patches = bl::max_constancy(bl::load(tile(cells)), {2, 4});
  bl::store(tile(cells_out), bl::multiple_of(patches, 8));
  // Runs of 4 consecutive values along each row.
  bl::store(tile(ramps_out), bl::max_contiguous(bl::load(tile(ramps)), {1, 4}));
});

struct HintedData {
  std::vector<int32_t> starts{0, 96, 48, 16};
  std::vector<float> x = random_floats(160);
  std::vector<float> out = poisoned(4 * 32);
  std::vector<int32_t> cells, ramps;
  std::vector<int32_t> cells_out = std::vector<int32_t>(8 * 16, INT32_MIN);
  std::vector<int32_t> ramps_out = std::vector<int32_t>(8 * 16, INT32_MIN);
  HintedData() {
    auto patch = random_ints<int32_t>(4 * 4, -1000, 1000);
    auto run = random_ints<int32_t>(8 * 4, -1000, 1000);
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 16; ++c) {
        cells.push_back(8 * patch[(r / 2) * 4 + c / 4]);
        ramps.push_back(run[r * 4 + c / 4] + c % 4);
      }
  }
  template <typename K> void launch(K &k) {
    k[{4}](starts, x, out, cells, cells_out, ramps, ramps_out, 32);
  }
  template <typename K> std::string ir(K &k) {
    return k.ir_for(starts, x, out, cells, cells_out, ramps, ramps_out, 32);
  }
};

/// The results of every op with this opcode, in program order.
std::vector<ir::Value *> results_of(ir::Function &f, ir::OpCode code) {
  std::vector<ir::Value *> found;
  f.walk([&](ir::Operation &op) {
    if (op.code() == code)
      found.push_back(op.result());
  });
  return found;
}

TEST(Hints, ReachTheAxisInfoAnalysis) {
  HintedData d;
  auto f = ir::parse_function(d.ir(hinted));
  ir::AxisInfoAnalysis facts(*f);

  auto multiple = results_of(*f, ir::OpCode::MultipleOf);
  ASSERT_EQ(multiple.size(), 2u);
  // 48 promises divisibility by its power-of-two part, 16.
  EXPECT_THAT(facts.get(multiple[0]).divisibility, ElementsAre(16));
  EXPECT_THAT(facts.get(multiple[1]).divisibility, ElementsAre(8, 8));
  // start + arange: contiguous over the block, aligned like start.
  bool found_offsets = false;
  for (ir::Value *v : results_of(*f, ir::OpCode::Add))
    if (v->type().is_block() &&
        facts.get(v).contiguity == std::vector<int64_t>{32} &&
        facts.get(v).divisibility == std::vector<int64_t>{16})
      found_offsets = true;
  EXPECT_TRUE(found_offsets) << ir::print_axis_info(*f);

  auto constant = results_of(*f, ir::OpCode::MaxConstancy);
  ASSERT_EQ(constant.size(), 1u);
  EXPECT_THAT(facts.get(constant[0]).constancy, ElementsAre(2, 4));
  // Facts stack: the multiple_of result keeps the constancy it was given.
  EXPECT_THAT(facts.get(multiple[1]).constancy, ElementsAre(2, 4));
  auto contiguous = results_of(*f, ir::OpCode::MaxContiguous);
  ASSERT_EQ(contiguous.size(), 1u);
  EXPECT_THAT(facts.get(contiguous[0]).contiguity, ElementsAre(1, 4));
}

TEST(Hints, ChangeNoValue) {
  HintedData d;
  d.launch(hinted);
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < 32; ++i)
      ASSERT_EQ(d.out[p * 32 + i], d.x[d.starts[p] + i]) << p << ", " << i;
  EXPECT_EQ(d.cells_out, d.cells);
  EXPECT_EQ(d.ramps_out, d.ramps);
}

// Hints whose every value is 1 say nothing and disappear from the IR.
auto trivial_hint = bl::kernel("trivial_hint", [](bl::Ptr<int32_t> x) {
  auto offs = bl::multiple_of(bl::arange(0, 16), 1);
  bl::store(x + offs, offs);
});

TEST(Hints, TrivialHintsAreDropped) {
  std::vector<int32_t> x(16, INT32_MIN);
  EXPECT_THAT(trivial_hint.ir_for(x), ::testing::Not(HasSubstr("multiple_of")));
  trivial_hint[{1}](x);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(x[i], i);
}

// ------------------------------------------------------------ device_print
auto printer = bl::kernel(
    "printer", [](bl::Ptr<float> x, bl::i32 n, bl::Const<int> BLOCK) {
      auto pid = bl::program_id(0);
      auto offs = pid * BLOCK + bl::arange(0, BLOCK);
      auto v = bl::load(x + offs, offs < n);
      bl::device_print("v", {v});
      bl::device_print("bits", {bl::bitcast(v, bl::uint32)}, /*hex=*/true);
      bl::device_print("pair", {offs, v});
      bl::device_print("pid", {pid});
    });

/// One printed line, taken apart.
struct Line {
  int pid;
  std::string index, label, value;
};

std::vector<Line> parse_lines(const std::string &text) {
  static const std::regex format(
      R"(pid \((\d+), 0, 0\) idx \(([0-9, ]*)\) (.+) (\S+))");
  std::vector<Line> lines;
  std::istringstream in(text);
  std::string s;
  while (std::getline(in, s)) {
    std::smatch m;
    if (!std::regex_match(s, m, format)) {
      ADD_FAILURE() << "unexpected line: " << s;
      continue;
    }
    lines.push_back({std::stoi(m[1]), m[2], m[3], m[4]});
  }
  return lines;
}

TEST(DevicePrint, OneLinePerElementThatReadsBack) {
  const int n = 6, block = 4, programs = 2;
  auto x = random_floats(n, -1e3f, 1e3f);
  x[1] = -0.0f;
  x[2] = 1e-42f; // subnormal
  ::testing::internal::CaptureStdout();
  printer[{programs}](x, n, block);
  std::vector<Line> lines =
      parse_lines(::testing::internal::GetCapturedStdout());
  // v, bits and pid: one line per element; pair: one per element of each.
  ASSERT_EQ(lines.size(), size_t(programs * (block * 4 + 1)));
  std::map<std::pair<int, std::string>, int> seen; // (pid, label idx) -> count
  for (const Line &l : lines) {
    ++seen[{l.pid, l.label + " " + l.index}];
    if (l.label == "pid") {
      EXPECT_EQ(l.index, "");
      EXPECT_EQ(l.value, std::to_string(l.pid));
      continue;
    }
    int lane = std::stoi(l.index);
    int i = l.pid * block + lane;
    float want = i < n ? x[i] : 0.0f; // masked-off lanes load 0
    uint32_t want_bits = std::bit_cast<uint32_t>(want);
    if (l.label == "v" || l.label == "pair (operand 1)") {
      // The shortest text that reads back to the same float.
      EXPECT_EQ(std::bit_cast<uint32_t>(std::strtof(l.value.c_str(), nullptr)),
                want_bits)
          << l.value;
    } else if (l.label == "bits") {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", want_bits);
      EXPECT_EQ(l.value, hex);
    } else if (l.label == "pair (operand 0)") {
      EXPECT_EQ(l.value, std::to_string(i));
    } else {
      ADD_FAILURE() << "unexpected label " << l.label;
    }
  }
  for (const auto &[key, count] : seen)
    EXPECT_EQ(count, 1) << "pid " << key.first << " " << key.second;
  EXPECT_EQ(seen.size(), lines.size());
}

// ----------------------------------------------------------- device_assert
static int assert_line;
auto checked_sqrt =
    bl::kernel("checked_sqrt", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                  bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto v = bl::load(x + offs, mask, 1.0f); // masked-off lanes pass
      assert_line = __LINE__ + 1;
      bl::device_assert(v >= 0, "x must not be negative");
      bl::store(out + offs, bl::sqrt(v), mask);
    });

TEST(DeviceAssert, PassingAssertionsChangeNothing) {
  const int n = 45;
  auto x = random_floats(n, 0, 100);
  auto out = poisoned(n);
  checked_sqrt[{bl::cdiv(n, 16)}](x, out, n, 16);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = std::sqrt(double(x[i]));
  EXPECT_TRUE(all_close(out, want, 0x1p-24, 0)); // one rounding
}

TEST(DeviceAssert, FailureNamesKernelProgramLineAndLane) {
  const int n = 45;
  auto x = random_floats(n, 0, 100);
  x[37] = -2; // program 2, lane 5
  auto out = poisoned(n);
  std::string message;
  try {
    checked_sqrt[{bl::cdiv(n, 16)}](x, out, n, 16);
    ADD_FAILURE() << "the assertion did not fail";
  } catch (const blocc::Error &e) {
    message = e.what();
  }
  EXPECT_THAT(message, HasSubstr("kernel 'checked_sqrt', program (2, 0, 0)"));
  EXPECT_THAT(message,
              HasSubstr("hints_debug_test.cpp:" + std::to_string(assert_line)));
  EXPECT_THAT(message,
              HasSubstr("assertion failed: x must not be negative (lane 5"));
  // Programs before the failing one ran; the failing one stored nothing.
  for (int i = 32; i < n; ++i)
    EXPECT_TRUE(std::isnan(out[i])) << "element " << i;
}

} // namespace
