// Poisoned outputs, shared by the test families: a buffer filled with a
// recognisable value before a kernel runs, so that an element the kernel
// forgot to write (or wrote when it should not have run) cannot pass for a
// correct one. Two kinds, each family naming the one it uses `poisoned`:
//   - bytes: every byte 0x5a, bit for bit the same on every backend (the
//     differential tests compare outputs bitwise; the error tests check a
//     mistaken kernel wrote nothing: untouched);
//   - nan: NaN for floats (any arithmetic on it stays NaN), the 0x5a
//     pattern for integers.
#pragma once

#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace blocc::poison {

namespace bytes {

template <typename T = float> std::vector<T> poisoned(size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void *>(v.data()), 0x5a, n * sizeof(T));
  return v;
}

/// True when no element of `v` differs, bit for bit, from poisoned<T>().
template <typename T> bool untouched(const std::vector<T> &v) {
  std::vector<T> fresh = poisoned<T>(v.size());
  return std::memcmp(static_cast<const void *>(v.data()),
                     static_cast<const void *>(fresh.data()),
                     v.size() * sizeof(T)) == 0;
}

} // namespace bytes

namespace nan {

/// NaN for floats, the 0x5a pattern for integers: what an element no
/// kernel wrote looks like.
template <typename T> T poison() {
  if constexpr (std::is_integral_v<T>) {
    T v;
    std::memset(&v, 0x5a, sizeof v);
    return v;
  } else {
    return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
  }
}

template <typename T = float> std::vector<T> poisoned(size_t n) {
  return std::vector<T>(n, poison<T>());
}

} // namespace nan

} // namespace blocc::poison
