#include "pass_checks.h"

#include "axis_info_check.h"
#include "differential.h"
#include "executors.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"

#include <sstream>

namespace blocc::differential {

namespace {

struct Pass {
  const char *name;
  void (*run)(ir::Function &);
};
const Pass kPipeline[] = {
    {"canonicalize", ir::canonicalize}, {"cse", ir::cse}, {"dce", ir::dce}};

std::string header(const GeneratedKernel &kernel, const std::string &check) {
  return "kernel seed " + std::to_string(kernel.seed) + ": " + check + "\n";
}

/// The first line where two texts differ, for round-trip reports.
std::string first_difference(const std::string &a, const std::string &b) {
  std::istringstream x(a), y(b);
  std::string lx, ly;
  for (int line = 1;; ++line) {
    bool more_x = static_cast<bool>(std::getline(x, lx));
    bool more_y = static_cast<bool>(std::getline(y, ly));
    if (!more_x && !more_y)
      return "";
    if (lx != ly || more_x != more_y)
      return "line " + std::to_string(line) + ":\n  printed:   " + lx +
             "\n  reprinted: " + ly + "\n";
  }
}

/// "" when `f` prints, parses back, reprints identically and verifies.
std::string round_trip(const ir::Function &f) {
  std::string text = ir::print(f);
  std::unique_ptr<ir::Function> parsed;
  try {
    parsed = ir::parse_function(text);
  } catch (const std::exception &e) {
    return std::string("the printed IR does not parse: ") + e.what() + "\n" +
           text;
  }
  std::string again = ir::print(*parsed);
  if (again != text)
    return "print -> parse -> print changes the text at " +
           first_difference(text, again) + text;
  try {
    ir::verify(*parsed);
  } catch (const std::exception &e) {
    return std::string("the parsed copy does not verify: ") + e.what() + "\n" +
           text;
  }
  return "";
}

std::unique_ptr<ir::Function> clone(const ir::Function &f) {
  return ir::parse_function(ir::print(f));
}

/// Names the first pass after which the interpreter's results change.
std::string find_culprit(const GeneratedKernel &kernel) {
  std::unique_ptr<ir::Function> f = clone(*kernel.function);
  for (const Pass &pass : kPipeline) {
    std::string before = ir::print(*f);
    pass.run(*f);
    CompareOptions options;
    options.comparison = Comparison::Bitwise;
    options.check_ranges = false;
    options.name_a = "original";
    options.name_b = std::string("after ") + pass.name;
    DifferentialResult r = compare_runs(kernel, interpreter_executor(),
                                        interpreter_running(*f), options);
    if (!r.ok)
      return std::string("the results first change after ") + pass.name +
             ".\nIR before " + pass.name + ":\n" + before + "IR after " +
             pass.name + ":\n" + ir::print(*f);
  }
  return "no single pass changes the results on its own";
}

} // namespace

CheckResult check_passes(const GeneratedKernel &kernel) {
  ir::Function &f = *kernel.function;
  try {
    ir::verify(f);
  } catch (const std::exception &e) {
    return {false, header(kernel, "(a) verify rejects the generated kernel") +
                       e.what() + "\n" + ir::print(f)};
  }
  if (std::string problem = round_trip(f); !problem.empty())
    return {false, header(kernel, "(b) round trip") + problem};

  std::unique_ptr<ir::Function> optimized = clone(f);
  for (const Pass &pass : kPipeline) {
    std::string before = ir::print(*optimized);
    try {
      pass.run(*optimized);
      ir::verify(*optimized);
    } catch (const std::exception &e) {
      return {false, header(kernel, std::string("(c) ") + pass.name +
                                        " fails or leaves IR that does not "
                                        "verify") +
                         e.what() + "\nIR before " + pass.name + ":\n" +
                         before};
    }
    if (std::string problem = round_trip(*optimized); !problem.empty())
      return {false,
              header(kernel, std::string("(c) round trip after ") + pass.name) +
                  problem};
  }

  CompareOptions options;
  options.comparison = Comparison::Bitwise;
  options.name_a = "original";
  options.name_b = "after canonicalize+cse+dce";
  DifferentialResult r = compare_runs(kernel, interpreter_executor(),
                                      interpreter_running(*optimized), options);
  if (!r.ok)
    return {false, header(kernel, "(c/d) interpreted results") + r.report +
                       find_culprit(kernel) + "\n"};
  if (std::string problem = check_axis_info(kernel, kernel.seed);
      !problem.empty())
    return {false, header(kernel, "(e) axis info") + problem};
  return {};
}

} // namespace blocc::differential
