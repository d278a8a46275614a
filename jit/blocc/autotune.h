// Autotuning: a kernel launched through a list of configurations (values
// of its block-size constants, num_warps, num_stages), the fastest chosen
// by measuring each at the first launch with a new key and kept, in memory
// and in the compile cache directory, for later launches and processes.
//
//   auto tuned = bl::autotune(matmul,
//       {bl::Config({{"BLOCK_M", 64}, {"BLOCK_N", 64}}, /*num_warps=*/4),
//        bl::Config({{"BLOCK_M", 128}, {"BLOCK_N", 64}}, 8)},
//       /*key=*/{"M", "N", "K"});
//   auto grid = [&](const bl::Config &c) {
//     return bl::Grid(bl::cdiv(M, c["BLOCK_M"]) * bl::cdiv(N, c["BLOCK_N"]));
//   };
//   tuned[grid](a, b, c, M, N, K);  // the arguments but the tuned constants
//
// The kernel's parameters must be named (bl::kernel("name", {...}, ...)).
// Every configuration sets the same constants. The key names arguments
// whose values (for pointers: their element type) decide the best
// configuration; the memory the arguments are in (host, or which GPU) and
// the kernel's other constants are always part of it.
//
// Tuning runs the kernel several times per configuration on the caller's
// arguments. A kernel that reads what it writes (in place, accumulating)
// names those pointer arguments in `AutotuneOptions::restore`: their
// contents are saved before tuning and put back after every trial run, so
// the launch that follows computes on the original data. Configurations
// that fail to compile or launch are skipped (and reported); if all fail,
// the launch throws blocc::Error with each one's reason.
//
// The choice is saved in $BLOCC_CACHE_DIR (or its default, see
// runtime/cpu/disk_cache.h) under autotune/, in a file named by the kernel
// and a hash of its signature and configurations: changing the list starts
// afresh. BLOCC_CACHE_DIR=off keeps choices in memory only.
// BLOCC_PRINT_AUTOTUNING=1 prints a line per choice (made or read back);
// `chosen()` lists them.
#pragma once

#include "blocc/kernel.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace blocc {

/// One configuration: constants by parameter name, and launch options.
class Config {
public:
  Config(std::vector<std::pair<std::string, int64_t>> constants,
         int num_warps = 4, int num_stages = 3)
      : constants_(std::move(constants)), num_warps_(num_warps),
        num_stages_(num_stages) {}

  /// The value of constant `name`; throws blocc::Error if it has none.
  int64_t operator[](const std::string &name) const;
  const std::vector<std::pair<std::string, int64_t>> &constants() const {
    return constants_;
  }
  int num_warps() const { return num_warps_; }
  int num_stages() const { return num_stages_; }
  /// "BLOCK_M=64 BLOCK_N=64 num_warps=4 num_stages=3"
  std::string str() const;

private:
  std::vector<std::pair<std::string, int64_t>> constants_;
  int num_warps_, num_stages_;
};

struct AutotuneOptions {
  /// Pointer arguments, by name, whose contents trial runs must not change.
  std::vector<std::string> restore;
};

/// Computes the grid from the configuration being launched.
using GridForConfig = std::function<Grid(const Config &)>;

namespace detail {

/// The non-template part: the configurations, the keyed choices, tuning
/// and their persistence.
class Autotuner {
public:
  Autotuner(KernelBase &kernel, std::vector<Config> configs,
            std::vector<std::string> key, AutotuneOptions options);
  ~Autotuner();

  /// Launches with the configuration chosen for these arguments (all of
  /// the kernel's but the tuned constants), tuning first if none is.
  void launch(const GridForConfig &grid, const std::vector<ArgValue> &args,
              LaunchOptions options);
  /// (key, configuration) for every choice made or read back so far.
  std::vector<std::pair<std::string, Config>> chosen() const;
  /// Configurations measured so far by this object (for tests).
  size_t num_tunings() const;

private:
  /// Throws unless `args` are the kernel's arguments but the tuned ones.
  void check_arity(const std::vector<ArgValue> &args) const;
  /// The fastest configuration for `args` and its time in ms, each
  /// launched by `run(index)` (configurations that fail are skipped).
  std::pair<size_t, double> tune(const std::vector<ArgValue> &args,
                                 const std::function<void(size_t)> &run);

  struct State;
  std::unique_ptr<State> state_;
};

} // namespace detail

template <typename F> class Autotuned {
public:
  Autotuned(Kernel<F> &kernel, std::vector<Config> configs,
            std::vector<std::string> key, AutotuneOptions options)
      : tuner_(std::make_shared<detail::Autotuner>(
            kernel, std::move(configs), std::move(key), std::move(options))) {}

  class Launch {
  public:
    Launch(std::shared_ptr<detail::Autotuner> tuner, GridForConfig grid)
        : tuner_(std::move(tuner)), grid_(std::move(grid)) {}
    template <typename... A> void operator()(A &&...args) {
      tuner_->launch(grid_, {detail::to_arg(std::forward<A>(args))...},
                     options_);
    }
    /// Options other than num_warps and num_stages (the backend, the
    /// stream, checked mode); those two come from the configuration.
    Launch &with(LaunchOptions o) {
      options_ = o;
      return *this;
    }

  private:
    std::shared_ptr<detail::Autotuner> tuner_;
    GridForConfig grid_;
    LaunchOptions options_;
  };

  Launch operator[](GridForConfig grid) { return Launch(tuner_, grid); }
  Launch operator[](Grid grid) {
    return Launch(tuner_, [grid](const Config &) { return grid; });
  }
  std::vector<std::pair<std::string, Config>> chosen() const {
    return tuner_->chosen();
  }
  size_t num_tunings() const { return tuner_->num_tunings(); }

private:
  std::shared_ptr<detail::Autotuner> tuner_;
};

/// `kernel` launched through the fastest of `configs` for each `key`.
template <typename F>
Autotuned<F> autotune(Kernel<F> &kernel, std::vector<Config> configs,
                      std::vector<std::string> key,
                      AutotuneOptions options = {}) {
  return Autotuned<F>(kernel, std::move(configs), std::move(key),
                      std::move(options));
}

} // namespace blocc
