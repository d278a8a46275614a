// The blocc side of each benchmark: kernels written as a Triton user would
// write them (tests/e2e and tutorials/ hold the same ones with their
// correctness tests), each launched on the CPU backend.
#pragma once

#include "peers.h"

#include <cstdint>
#include <string>

namespace bench::blocc_side {

/// Elements per program of vector add.
struct AddConfig {
  int block = 4096;
  std::string str() const { return "BLOCK=" + std::to_string(block); }
};
void vector_add(const float *x, const float *y, float *out, int n,
                const AddConfig &config);
/// vector_add's launch on a grid of one program, through the CPU backend's
/// entry points directly (no frontend: no argument checks, no
/// specialization key), for the relaunch row's breakdown.
struct DirectAdd;
DirectAdd *prepare_direct_add(const float *x, const float *y, float *out, int n,
                              int block);
void run_direct_add(DirectAdd *launch);

/// out = f(x), n elements, BLOCK elements a program.
struct MathConfig {
  int block = 4096;
  std::string str() const { return "BLOCK=" + std::to_string(block); }
};
void math(peer::MathFunction function, const float *x, float *out, int n,
          const MathConfig &config);

/// Row softmax, one program per row and the whole row in one block.
void softmax(const float *in, float *out, int rows, int cols);

/// Layer norm forward, one program per row, BLOCK columns per step of the
/// three column loops.
struct LayerNormConfig {
  int block = 1024;
  std::string str() const { return "BLOCK=" + std::to_string(block); }
};
void layer_norm(const float *x, float *y, const float *w, const float *b,
                float *mean, float *rstd, int rows, int cols, float eps,
                const LayerNormConfig &config);

/// C = A B, one BM x BN tile of C per program, a K loop of bl::dot over
/// BK-wide slices. m, n, k must be multiples of the tile sizes.
struct MatmulConfig {
  int bm = 64, bn = 64, bk = 64;
  std::string str() const {
    return "BM=" + std::to_string(bm) + " BN=" + std::to_string(bn) +
           " BK=" + std::to_string(bk);
  }
};
void matmul(const float *a, const float *b, float *c, int m, int n, int k,
            const MatmulConfig &config);

/// One launch of a fresh specialization of vector add (a BLOCK never
/// launched before in this process): trace, passes, LLVM, JIT, run.
void vector_add_new_specialization(const float *x, const float *y, float *out,
                                   int n, int block);

} // namespace bench::blocc_side
