#include "suite.h"

#include "blocc_kernels.h"
#include "peers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace bench {

namespace {

constexpr double kGiga = 1e9;

std::string shape_name(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

/// The configuration with the smallest median time over a few runs (the
/// autotuning a Triton user does with triton.autotune).
template <typename Config, typename Run>
Config fastest(const std::vector<Config> &candidates, Run run) {
  TimingPlan quick{
      .warmup = 1, .min_reps = 3, .max_reps = 5, .min_seconds = 0.05};
  Config best = candidates.front();
  double best_time = std::numeric_limits<double>::infinity();
  for (const Config &c : candidates) {
    double t = median_seconds({[&] { run(c); }}, quick)[0];
    std::printf("  tune %-28s %9.3f ms\n", c.str().c_str(), t * 1e3);
    if (t < best_time) {
      best_time = t;
      best = c;
    }
  }
  return best;
}

} // namespace

std::vector<float> Suite::random(size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng_);
  return v;
}

Record Suite::throughput(const std::string &kernel, std::vector<int64_t> shape,
                         const std::string &metric, double amount,
                         const std::vector<double> &seconds,
                         const std::string &peer, const std::string &config,
                         double min_ratio) {
  Record r;
  r.kernel = kernel;
  r.shape = std::move(shape);
  r.metric = metric;
  r.blocc = amount / seconds[0] / kGiga;
  r.peer = peer;
  r.peer_value = amount / seconds[1] / kGiga;
  r.config = config;
  r.min_ratio = min_ratio;
  return r;
}

void Suite::add_numpy_note(const std::string &what) {
  report_.notes.push_back("numpy row for " + what +
                          " skipped: " + numpy_.why_not());
  std::printf("  numpy skipped: %s\n", numpy_.why_not().c_str());
}

double cold_compile_milliseconds() {
  const int n = 4096;
  std::vector<float> x(n), y(n), out(n), want(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i) * 0.5f;
    y[i] = 1.0f / static_cast<float>(i + 1);
  }
  poison(out);
  double seconds = seconds_of(
      [&] { blocc_side::vector_add(x.data(), y.data(), out.data(), n, {}); });
  peer::vector_add_serial(x.data(), y.data(), want.data(), n);
  return out == want ? seconds * 1e3 : -1;
}

void Suite::compile_latency(const std::string &self, int runs) {
  std::printf("compile latency (%d fresh processes)\n", runs);
  std::vector<double> cold;
  for (int r = 0; r < runs; ++r) {
    std::string command = "'" + self + "' --cold-compile";
    FILE *pipe = popen(command.c_str(), "r");
    double ms = -1;
    if (!pipe || std::fscanf(pipe, "%lf", &ms) != 1)
      ms = -1;
    if (pipe)
      pclose(pipe);
    if (ms < 0) {
      check_.close("cold compile run " + std::to_string(r) +
                       " (a wrong result or no output)",
                   {1.0f}, {0.0f}, 0, 0);
      return;
    }
    cold.push_back(ms);
  }
  std::printf("  cold first launches (ms):");
  for (double ms : cold)
    std::printf(" %.1f", ms);
  std::printf("\n");
  Record r;
  r.kernel = "compile cold";
  r.shape = {4096};
  r.metric = "ms";
  r.higher_is_better = false;
  r.blocc = median(cold);
  r.peer = "none";
  r.max_value = 100;
  r.config = "vector add, first launch in a process: JIT start, trace, "
             "passes, LLVM -O3, JIT, run";
  report_.records.push_back(r);

  // A new specialization once the JIT runs: what each further kernel costs.
  const int n = 4096;
  std::vector<float> x = random(n, -1, 1), y = random(n, -1, 1), out(n),
                     want(n);
  peer::vector_add_serial(x.data(), y.data(), want.data(), n);
  blocc_side::vector_add(x.data(), y.data(), out.data(), n, {.block = 64});
  std::vector<double> warm;
  for (int block : {128, 256, 512, 2048, 8192}) {
    poison(out);
    warm.push_back(seconds_of([&] {
                     blocc_side::vector_add_new_specialization(
                         x.data(), y.data(), out.data(), n, block);
                   }) *
                   1e3);
    check_.close("new specialization BLOCK=" + std::to_string(block), out, want,
                 0, 0);
  }
  r.kernel = "compile warm";
  r.blocc = median(warm);
  r.max_value.reset();
  r.config = "vector add, a new specialization (trace, passes, LLVM -O3, "
             "JIT, run) with the JIT started";
  report_.records.push_back(r);
}

void Suite::relaunch() {
  std::printf("relaunch\n");
  const int n = 16, block = 16, launches = 1000;
  std::vector<float> x = random(n, -1, 1), y = random(n, -1, 1), out(n),
                     want(n);
  peer::vector_add_serial(x.data(), y.data(), want.data(), n);
  poison(out);
  blocc_side::vector_add(x.data(), y.data(), out.data(), n, {.block = block});
  check_.close("relaunch vector add n=16", out, want, 0, 0);
  blocc_side::DirectAdd *direct =
      blocc_side::prepare_direct_add(x.data(), y.data(), out.data(), n, block);
  auto [full, backend_only, peer_call] = [&] {
    auto t = median_seconds(
        {[&] {
           for (int i = 0; i < launches; ++i)
             blocc_side::vector_add(x.data(), y.data(), out.data(), n,
                                    {.block = block});
         },
         [&] {
           for (int i = 0; i < launches; ++i)
             blocc_side::run_direct_add(direct);
         },
         [&] {
           for (int i = 0; i < launches; ++i)
             peer::vector_add_serial(x.data(), y.data(), out.data(), n);
         }},
        plan_);
    return std::tuple{t[0], t[1], t[2]};
  }();
  const double us = 1e6 / launches;
  std::printf("  per launch: %.2f us (cpu::run alone %.2f us, direct C++ "
              "call %.3f us)\n",
              full * us, backend_only * us, peer_call * us);
  Record r;
  r.kernel = "relaunch";
  r.shape = {n};
  r.metric = "us";
  r.higher_is_better = false;
  r.blocc = full * us;
  r.peer = "direct C++ call";
  r.peer_value = peer_call * us;
  r.max_value = 5;
  char config[160];
  std::snprintf(config, sizeof config,
                "cached launch of a 1-program grid (BLOCK=16); of which "
                "blocc::cpu::run %.2f us",
                backend_only * us);
  r.config = config;
  report_.records.push_back(r);
}

void Suite::vector_add(int n) {
  std::printf("vector add n=%d\n", n);
  std::vector<float> x = random(n, -1, 1), y = random(n, -1, 1), out(n),
                     want(n);
  auto config = fastest<blocc_side::AddConfig>(
      {{1024}, {4096}, {16384}, {65536}}, [&](const auto &c) {
        blocc_side::vector_add(x.data(), y.data(), out.data(), n, c);
      });
  poison(out);
  blocc_side::vector_add(x.data(), y.data(), out.data(), n, config);
  peer::vector_add(x.data(), y.data(), want.data(), n);
  if (!check_.close("vector add vs omp-loop", out, want, 0, 0))
    return;
  auto t = median_seconds(
      {[&] {
         blocc_side::vector_add(x.data(), y.data(), out.data(), n, config);
       },
       [&] { peer::vector_add(x.data(), y.data(), want.data(), n); }},
      plan_);
  const double bytes = 3.0 * sizeof(float) * n;
  Record r = throughput("vector add", {n}, "GB/s", bytes, t, "omp-loop",
                        config.str(), 0.9);
  report_.records.push_back(r);

  if (!numpy_.available())
    return add_numpy_note("vector add");
  auto np = numpy_.run(
      "add", {{"x.f32", x.data(), x.size()}, {"y.f32", y.data(), y.size()}},
      std::to_string(n), out.size(), 20, 3);
  if (!np)
    return add_numpy_note("vector add");
  if (!check_.close("vector add vs numpy", out, np->output, 0, 0))
    return;
  r.peer = "numpy (1 thread)";
  r.peer_value = bytes / np->median_seconds / kGiga;
  r.min_ratio.reset();
  report_.records.push_back(r);
}

void Suite::math(peer::MathFunction function, int n) {
  struct Function {
    const char *name;
    float lo, hi;
  };
  // Ranges where each function's result is far from overflow and from
  // rounding to a constant; log's is of the arguments' binary exponents.
  static const Function functions[] = {
      {"exp", -80, 80}, {"log", -100, 100}, {"sin", -100, 100},
      {"tanh", -5, 5},  {"erf", -4, 4},     {"sigmoid", -20, 20}};
  const Function &f = functions[static_cast<int>(function)];
  std::printf("%s n=%d\n", f.name, n);
  std::vector<float> x = random(n, f.lo, f.hi), out(n), want(n);
  if (function == peer::MathFunction::Log)
    for (float &v : x)
      v = std::exp2(v);
  auto config = fastest<blocc_side::MathConfig>(
      {{1024}, {4096}, {16384}}, [&](const auto &c) {
        blocc_side::math(function, x.data(), out.data(), n, c);
      });
  poison(out);
  blocc_side::math(function, x.data(), out.data(), n, config);
  peer::math(function, x.data(), want.data(), n);
  // blocc's functions are within their documented few ulp, libmvec's
  // within 4.
  if (!check_.close(std::string(f.name) + " vs libmvec", out, want, 4e-6,
                    1e-30))
    return;
  auto t = median_seconds(
      {[&] { blocc_side::math(function, x.data(), out.data(), n, config); },
       [&] { peer::math(function, x.data(), want.data(), n); }},
      plan_);
  report_.records.push_back(throughput(
      f.name, {n}, "Gelem/s", n, t, "omp-loop (libmvec)", config.str(), 1.0));
}

void Suite::softmax(int rows, int cols) {
  std::printf("softmax %dx%d\n", rows, cols);
  size_t size = size_t(rows) * cols;
  std::vector<float> x = random(size, -10, 10), out(size), want(size);
  poison(out);
  blocc_side::softmax(x.data(), out.data(), rows, cols);
  peer::softmax(x.data(), want.data(), rows, cols);
  // Both exps are within a few ulp; the sums differ in order.
  if (!check_.close("softmax " + shape_name({rows, cols}) + " vs omp-loop", out,
                    want, 2e-5, 1e-30))
    return;
  auto t = median_seconds(
      {[&] { blocc_side::softmax(x.data(), out.data(), rows, cols); },
       [&] { peer::softmax(x.data(), want.data(), rows, cols); }},
      plan_);
  report_.records.push_back(throughput(
      "softmax", {rows, cols}, "GB/s", 2.0 * sizeof(float) * size, t,
      "omp-loop", "one program per row, BLOCK=" + std::to_string(cols), 0.8));
}

void Suite::layer_norm(int rows, int cols) {
  std::printf("layer norm %dx%d\n", rows, cols);
  size_t size = size_t(rows) * cols;
  const float eps = 1e-5f;
  std::vector<float> x = random(size, 2, 4), w = random(cols, 0.5f, 1.5f),
                     b = random(cols, -1, 1), y(size), want(size), mean(rows),
                     rstd(rows), want_mean(rows), want_rstd(rows);
  auto run = [&](const blocc_side::LayerNormConfig &c) {
    blocc_side::layer_norm(x.data(), y.data(), w.data(), b.data(), mean.data(),
                           rstd.data(), rows, cols, eps, c);
  };
  auto run_peer = [&] {
    peer::layer_norm(x.data(), want.data(), w.data(), b.data(),
                     want_mean.data(), want_rstd.data(), rows, cols, eps);
  };
  auto config = fastest<blocc_side::LayerNormConfig>(
      {{512}, {1024}, {2048}, {4096}}, run);
  poison(y);
  poison(mean);
  poison(rstd);
  run(config);
  run_peer();
  std::string name = "layer norm " + shape_name({rows, cols});
  // Sums of cols terms in different orders: relative errors of a few
  // cols * 2^-24 at worst.
  if (!check_.close(name + " mean", mean, want_mean, 1e-5, 0) ||
      !check_.close(name + " rstd", rstd, want_rstd, 1e-4, 0) ||
      !check_.close(name + " y", y, want, 1e-4, 1e-4))
    return;
  auto t = median_seconds({[&] { run(config); }, run_peer}, plan_);
  const double bytes = sizeof(float) * (2.0 * size + 2.0 * cols + 2.0 * rows);
  report_.records.push_back(
      throughput("layer norm", {rows, cols}, "GB/s", bytes, t, "omp-loop",
                 "one program per row, " + config.str(), 0.8));
}

void Suite::matmul(int m, int n, int k) {
  std::printf("matmul %dx%dx%d\n", m, n, k);
  std::vector<float> a = random(size_t(m) * k, -1, 1),
                     b = random(size_t(k) * n, -1, 1), c(size_t(m) * n),
                     want(c.size()), scale(c.size());
  std::vector<blocc_side::MatmulConfig> candidates;
  for (blocc_side::MatmulConfig cfg : {blocc_side::MatmulConfig{32, 64, 32},
                                       {64, 64, 32},
                                       {64, 64, 64},
                                       {64, 128, 32},
                                       {128, 128, 32},
                                       {128, 64, 64}})
    if (m % cfg.bm == 0 && n % cfg.bn == 0 && k % cfg.bk == 0)
      candidates.push_back(cfg);
  auto config = fastest(candidates, [&](const auto &cfg) {
    blocc_side::matmul(a.data(), b.data(), c.data(), m, n, k, cfg);
  });
  poison(c);
  blocc_side::matmul(a.data(), b.data(), c.data(), m, n, k, config);
  peer::matmul(a.data(), b.data(), want.data(), m, n, k);
  {
    // The error of any order of k products and sums is bounded by about
    // k * 2^-24 * sum |a_iq b_qj|, which the peer computes on |A|, |B|.
    std::vector<float> abs_a(a.size()), abs_b(b.size());
    std::transform(a.begin(), a.end(), abs_a.begin(),
                   [](float v) { return std::abs(v); });
    std::transform(b.begin(), b.end(), abs_b.begin(),
                   [](float v) { return std::abs(v); });
    peer::matmul(abs_a.data(), abs_b.data(), scale.data(), m, n, k);
  }
  const double tolerance = 2.0 * k * 0x1p-24;
  std::string name = "matmul " + shape_name({m, n, k});
  if (!check_.close_scaled(name + " vs omp-loop", c, want, scale, tolerance))
    return;
  auto t = median_seconds(
      {[&] {
         blocc_side::matmul(a.data(), b.data(), c.data(), m, n, k, config);
       },
       [&] { peer::matmul(a.data(), b.data(), want.data(), m, n, k); }},
      plan_);
  const double flops = 2.0 * m * n * k;
  Record r;
  r.kernel = "matmul";
  r.shape = {m, n, k};
  r.metric = "GFLOP/s";
  r.blocc = flops / t[0] / kGiga;
  r.config = config.str();
  if (!numpy_.available()) {
    add_numpy_note("matmul");
  } else if (auto np = numpy_.run(
                 "matmul",
                 {{"a.f32", a.data(), a.size()}, {"b.f32", b.data(), b.size()}},
                 std::to_string(m) + " " + std::to_string(n) + " " +
                     std::to_string(k),
                 c.size(), 20, 3)) {
    if (check_.close_scaled(name + " vs numpy", c, np->output, scale,
                            tolerance)) {
      r.peer = "numpy sgemm (" + std::to_string(report_.threads) + " thr)";
      r.peer_value = flops / np->median_seconds / kGiga;
      r.min_ratio = 0.5;
      report_.records.push_back(r);
      std::printf("  %s\n", np->description.c_str());
      report_.notes.push_back("numpy peer: " + np->description);
    }
  } else {
    add_numpy_note("matmul");
  }
  r.peer = "omp-loop";
  r.peer_value = flops / t[1] / kGiga;
  r.min_ratio.reset();
  report_.records.push_back(r);
}

} // namespace bench
