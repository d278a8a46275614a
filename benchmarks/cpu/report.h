// Benchmark results: one Record per (kernel, shape, dtype, peer), printed
// as a table and written as JSON in the results format
// (benchmarks/README.md, "Results"), with each row's bar and whether it is
// met.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bench {

struct Record {
  std::string kernel; // "softmax"
  std::vector<int64_t> shape;
  std::string dtype = "f32";
  std::string metric;           // "GB/s", "GFLOP/s", "ms", "us"
  bool higher_is_better = true; // throughputs; false for times
  double blocc = 0;
  std::string peer; // "omp-loop", "numpy", "none"
  std::optional<double> peer_value;
  std::string config; // blocc's launch configuration
  /// The bar: the ratio (blocc over peer) must reach
  /// min_ratio, or blocc's value must stay below max_value.
  std::optional<double> min_ratio, max_value;

  /// blocc over peer, higher is better for blocc (times inverted).
  std::optional<double> ratio() const;
  std::string bar() const;
  std::optional<bool> meets_bar() const;
};

struct Report {
  std::string hardware, date, command;
  int threads = 1;
  std::vector<Record> records;
  std::vector<std::string> notes; // skipped rows and why

  void print_table() const;
  /// Writes the JSON file; throws std::runtime_error when it cannot.
  void write_json(const std::string &path) const;
};

} // namespace bench
