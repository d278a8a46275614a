// Tutorial 01: vector addition. The kernel is in vector_add.h (Python calls
// the same kernel as blocc.kernels.add); this program checks it against a
// float64 reference at several sizes and prints its IR.
#include "vector_add.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace bl = blocc;

using blocc::tutorials::add;

int main() {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-1, 1);
  bool all_ok = true;
  // Host buffers run on the CPU backend (the interpreter where blocc was
  // built without it); BLOCC_BACKEND=interpreter picks the interpreter.
  std::printf("Running on the %s.\n\n", bl::host_backend_description().c_str());
  std::printf("%-10s %-8s %-12s %s\n", "n", "BLOCK", "max |err|", "time");
  for (int n : {1, 97, 1000, 98432}) {
    std::vector<float> x(n), y(n), out(n, NAN);
    for (int i = 0; i < n; ++i) {
      x[i] = dist(rng);
      y[i] = dist(rng);
    }
    const int block = 1024;
    auto start = std::chrono::steady_clock::now();
    add[{bl::cdiv(n, block)}](x, y, out, n, block);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    double err = 0;
    for (int i = 0; i < n; ++i)
      err = std::fmax(
          err, std::fabs(double(out[i]) - (double(x[i]) + double(y[i]))));
    bool ok = err <= 1e-6;
    all_ok &= ok;
    std::printf("%-10d %-8d %-12.3g %.2f ms %s\n", n, block, err, ms,
                ok ? "ok" : "MISMATCH");
  }
  std::printf("\nThe kernel's IR after the generic passes (n = 98432):\n%s",
              add.ir_for(static_cast<float *>(nullptr),
                         static_cast<float *>(nullptr),
                         static_cast<float *>(nullptr), 98432, 1024)
                  .c_str());
  std::printf("01-vector-add: %s\n", all_ok ? "PASSED" : "FAILED");
  return all_ok ? 0 : 1;
}
