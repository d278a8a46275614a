// Row r of an m x n matrix divided by divisors[r]: the block divided by one
// value per program, as softmax divides by its row sum. Both backends lower
// it to a reciprocal and two fmas per quotient where that is exact
// (backends/llvm/one_divisor.h); tests/cpu/division_test.cpp and
// tests/nvptx/gpu_divide_minmax_test.cpp check it against IEEE division.
#pragma once

#include <blocc/blocc.h>

namespace blocc::testing {

inline auto divide_rows = blocc::kernel(
    "divide_rows",
    [](blocc::Ptr<float> x, blocc::Ptr<float> divisors, blocc::Ptr<float> out,
       blocc::i32 n, blocc::Const<int> BLOCK) {
      auto row = blocc::program_id(0);
      auto cols = blocc::arange(0, BLOCK);
      auto mask = cols < n;
      auto d = blocc::load(divisors + row);
      auto a = blocc::load(x + row * n + cols, mask, 1.0f);
      blocc::store(out + row * n + cols, a / d, mask);
    });

} // namespace blocc::testing
