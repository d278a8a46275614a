// Branches on a runtime scalar argument, on a scalar loaded from memory, and
// on the induction variable inside a loop; carried blocks and scalars, an
// if_ without else, and an if_ nested in an if_.
// tests/e2e/control_flow_test.cpp checks it on the host backends,
// tests/nvptx/gpu_fused_test.cpp on the GPU against the CPU backend.
#pragma once

#include <blocc/blocc.h>

namespace blocc::testing {

namespace bl = blocc;

inline auto branches = bl::kernel(
    "branches", [](bl::Ptr<float> x, bl::Ptr<float> flags, bl::Ptr<float> out,
                   bl::Ptr<int32_t> taken, bl::i32 n, bl::i32 mode,
                   bl::i32 steps, bl::Const<int> BLOCK) {
      auto pid = bl::program_id(0);
      auto offs = pid * BLOCK + bl::arange(0, BLOCK);
      auto mask = offs < n;
      auto y = bl::load(x + offs, mask);
      auto count = bl::scalar(0, bl::int32);
      bl::if_(
          mode == 1,
          [&] {
            y = y * 2.0f;
            count += 1;
          },
          [&] {
            y = y - 1.0f;
            bl::if_(mode == 2, [&] { count += 10; }); // nested, no else
          });
      // A per-program flag read from memory decides the next step.
      auto flag = bl::load(flags + pid);
      bl::if_(flag > 0.5f, [&] {
        y = -y;
        count += 100;
      });
      for (auto i : bl::range(0, steps)) {
        bl::if_(
            i % 3 == 0, [&] { y = y + 1.0f; },
            [&] {
              y = y * 0.5f;
              count += 1000;
            });
      }
      bl::store(out + offs, y, mask);
      bl::store(taken + pid, count);
    });

} // namespace blocc::testing
