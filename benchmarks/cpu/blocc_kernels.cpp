#include "blocc_kernels.h"

#include "backends/cpu/cpu_backend.h"

#include <blocc/blocc.h>

#include <cmath>
#include <memory>
#include <vector>

namespace bl = blocc;

namespace bench::blocc_side {

namespace {

const bl::LaunchOptions kOnCpu{.backend = bl::Backend::Cpu};

auto add_kernel = bl::kernel("add", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                       bl::Ptr<float> out, bl::i32 n,
                                       bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(out + offsets,
            bl::load(x + offsets, mask) + bl::load(y + offsets, mask), mask);
});

/// The math rows' function (the kernel's FUNCTION) of x.
bl::Tensor apply_math(peer::MathFunction function, const bl::Tensor &x) {
  switch (function) {
  case peer::MathFunction::Exp:
    return bl::exp(x);
  case peer::MathFunction::Log:
    return bl::log(x);
  case peer::MathFunction::Sin:
    return bl::sin(x);
  case peer::MathFunction::Tanh:
    return bl::tanh(x);
  case peer::MathFunction::Erf:
    return bl::erf(x);
  case peer::MathFunction::Sigmoid:
    break;
  }
  return bl::sigmoid(x);
}

auto math_kernel =
    bl::kernel("math", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n,
                          bl::Const<int> FUNCTION, bl::Const<int> BLOCK) {
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      bl::store(out + offsets,
                apply_math(static_cast<peer::MathFunction>(int(FUNCTION)),
                           bl::load(x + offsets, mask)),
                mask);
    });

auto softmax_kernel =
    bl::kernel("softmax", [](bl::Ptr<float> out, bl::Ptr<float> in,
                             bl::i32 n_cols, bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK);
      auto mask = cols < n_cols;
      auto x = bl::load(in + row * n_cols + cols, mask, -INFINITY);
      auto numerator = bl::exp(x - bl::max(x, 0));
      bl::store(out + row * n_cols + cols, numerator / bl::sum(numerator, 0),
                mask);
    });

auto layer_norm_kernel = bl::kernel(
    "layer_norm",
    [](bl::Ptr<float> x, bl::Ptr<float> y, bl::Ptr<float> weight,
       bl::Ptr<float> bias, bl::Ptr<float> mean_out, bl::Ptr<float> rstd_out,
       bl::i32 n, bl::f32 eps, bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto x_row = x + row * n;
      auto y_row = y + row * n;
      auto partial_sum = bl::zeros({BLOCK}, bl::float32);
      for (auto start : bl::range(0, n, BLOCK)) {
        auto cols = start + bl::arange(0, BLOCK);
        partial_sum += bl::load(x_row + cols, cols < n, 0.f);
      }
      auto mean = bl::sum(partial_sum, 0) / n.to(bl::float32);
      auto partial_squares = bl::zeros({BLOCK}, bl::float32);
      for (auto start : bl::range(0, n, BLOCK)) {
        auto cols = start + bl::arange(0, BLOCK);
        auto v = bl::load(x_row + cols, cols < n, 0.f);
        auto centered = bl::where(cols < n, v - mean, 0.f);
        partial_squares += centered * centered;
      }
      auto rstd =
          1.f / bl::sqrt(bl::sum(partial_squares, 0) / n.to(bl::float32) + eps);
      bl::store(mean_out + row, mean);
      bl::store(rstd_out + row, rstd);
      for (auto start : bl::range(0, n, BLOCK)) {
        auto cols = start + bl::arange(0, BLOCK);
        auto mask = cols < n;
        auto w = bl::load(weight + cols, mask);
        auto b = bl::load(bias + cols, mask);
        auto v = bl::load(x_row + cols, mask, 0.f);
        bl::store(y_row + cols, (v - mean) * rstd * w + b, mask);
      }
    });

auto matmul_kernel = bl::kernel("matmul", [](bl::Ptr<float> a, bl::Ptr<float> b,
                                             bl::Ptr<float> c, bl::i32 N,
                                             bl::i32 K, bl::Const<int> BM,
                                             bl::Const<int> BN,
                                             bl::Const<int> BK) {
  auto rows = bl::program_id(0) * BM + bl::arange(0, BM);
  auto cols = bl::program_id(1) * BN + bl::arange(0, BN);
  auto ks = bl::arange(0, BK);
  auto a_tile = a + bl::expand_dims(rows, 1) * K + bl::expand_dims(ks, 0);
  auto b_tile = b + bl::expand_dims(ks, 1) * N + bl::expand_dims(cols, 0);
  bl::Tensor acc = bl::zeros({BM, BN}, bl::float32);
  for ([[maybe_unused]] auto k0 : bl::range(0, K, BK)) {
    acc = bl::dot(bl::load(a_tile), bl::load(b_tile), acc);
    a_tile = a_tile + BK;
    b_tile = b_tile + BK * N;
  }
  bl::store(c + bl::expand_dims(rows, 1) * N + bl::expand_dims(cols, 0), acc);
});

int next_power_of_two(int n) {
  int p = 1;
  while (p < n)
    p *= 2;
  return p;
}

} // namespace

void vector_add(const float *x, const float *y, float *out, int n,
                const AddConfig &config) {
  add_kernel[{bl::cdiv(n, config.block)}].with(kOnCpu)(x, y, out, n,
                                                       config.block);
}

void math(peer::MathFunction function, const float *x, float *out, int n,
          const MathConfig &config) {
  math_kernel[{bl::cdiv(n, config.block)}].with(kOnCpu)(
      x, out, n, static_cast<int>(function), config.block);
}

void vector_add_new_specialization(const float *x, const float *y, float *out,
                                   int n, int block) {
  add_kernel[{bl::cdiv(n, block)}].with(kOnCpu)(x, y, out, n, block);
}

struct DirectAdd {
  std::shared_ptr<const blocc::cpu::CompiledKernel> kernel;
  std::vector<blocc::KernelArg> args;
  blocc::Grid grid;
};

DirectAdd *prepare_direct_add(const float *x, const float *y, float *out, int n,
                              int block) {
  auto *launch = new DirectAdd;
  const blocc::ir::Function &function = add_kernel.specialize(
      {bl::detail::to_arg(x), bl::detail::to_arg(y), bl::detail::to_arg(out),
       bl::detail::to_arg(n), bl::detail::to_arg(block)});
  launch->kernel = blocc::cpu::compile(function);
  launch->args = {blocc::KernelArg::of_pointer(const_cast<float *>(x)),
                  blocc::KernelArg::of_pointer(const_cast<float *>(y)),
                  blocc::KernelArg::of_pointer(out),
                  blocc::KernelArg::of_int(n)};
  launch->grid = {bl::cdiv(n, block)};
  return launch;
}

void run_direct_add(DirectAdd *launch) {
  blocc::cpu::run(*launch->kernel, launch->grid, launch->args);
}

void softmax(const float *in, float *out, int rows, int cols) {
  softmax_kernel[{rows}].with(kOnCpu)(out, in, cols, next_power_of_two(cols));
}

void layer_norm(const float *x, float *y, const float *w, const float *b,
                float *mean, float *rstd, int rows, int cols, float eps,
                const LayerNormConfig &config) {
  layer_norm_kernel[{rows}].with(kOnCpu)(x, y, w, b, mean, rstd, cols, eps,
                                         config.block);
}

void matmul(const float *a, const float *b, float *c, int m, int n, int k,
            const MatmulConfig &config) {
  matmul_kernel[{m / config.bm, n / config.bn}].with(kOnCpu)(
      a, b, c, n, k, config.bm, config.bn, config.bk);
}

} // namespace bench::blocc_side
