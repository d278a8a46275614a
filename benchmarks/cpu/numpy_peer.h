// numpy as a peer: the benchmark writes its inputs to a temporary folder,
// runs benchmarks/cpu/numpy_peer.py in a python3 subprocess (with the
// BLAS thread count set to blocc's), and reads back numpy's median time
// and result. Where python3 or numpy is missing the row is skipped with
// the reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace bench {

struct NumpyResult {
  double median_seconds = 0;
  std::string description; // "numpy 2.4.6, scipy-openblas 0.3.31"
  std::vector<float> output;
};

struct NumpyInput {
  std::string file; // "x.f32"
  const float *data;
  size_t count;
};

class NumpyPeer {
public:
  /// Checks once whether `python3 -c "import numpy"` works.
  NumpyPeer(std::string script, int threads);
  bool available() const { return available_; }
  /// Why numpy rows are skipped (when !available()).
  const std::string &why_not() const { return why_not_; }
  void disable(std::string why) {
    available_ = false;
    why_not_ = std::move(why);
  }

  /// Runs op ("add", "matmul") on the inputs; `shape` is written to
  /// shape.txt. Returns nothing (and sets why_not) when the run fails.
  std::optional<NumpyResult> run(const std::string &op,
                                 const std::vector<NumpyInput> &inputs,
                                 const std::string &shape, size_t output_count,
                                 int reps, int warmup);

private:
  std::string environment() const;
  std::string script_;
  int threads_;
  bool available_ = false;
  std::string why_not_;
};

} // namespace bench
