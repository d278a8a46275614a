// What a launch hands to whatever executes a kernel (the interpreter, the
// CPU backend, the GPU backend): the grid and one value per kernel
// argument. No IR or LLVM types here: the runtime depends on neither.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <source_location>
#include <type_traits>
#include <vector>

namespace blocc {

/// Number of program instances along each grid axis.
struct Grid {
  int64_t x = 1, y = 1, z = 1;
  Grid() = default;
  // A template so that `kernel[{n}]` accepts any integer type without a
  // narrowing error from the braces.
  template <typename X, typename Y = int64_t, typename Z = int64_t>
  requires std::is_integral_v<X> && std::is_integral_v<Y> &&
      std::is_integral_v<Z>
      Grid(X x_, Y y_ = 1, Z z_ = 1,
           std::source_location where = std::source_location::current())
      : x(static_cast<int64_t>(x_)), y(static_cast<int64_t>(y_)),
        z(static_cast<int64_t>(z_)), loc(where) {}
  /// Where the grid was written: `kernel[{n}]` is the launch's line, which
  /// launch errors name.
  std::source_location loc;
  int64_t count() const { return x * y * z; }
  int64_t operator[](int axis) const {
    return axis == 0 ? x : axis == 1 ? y : z;
  }
};

/// One runtime argument. A pointer carries the extent of the buffer it points
/// into when the caller passed a sized container (std::span, std::vector,
/// a runtime buffer), so that out-of-bounds accesses can be reported;
/// `size_bytes == kUnknownSize` means a raw pointer whose extent is unknown.
struct KernelArg {
  static constexpr size_t kUnknownSize = ~size_t{0};
  enum class Kind { Pointer, Int, Float } kind = Kind::Int;
  void *pointer = nullptr;
  size_t size_bytes = kUnknownSize;
  int64_t int_value = 0;  // integers of any width, sign- or zero-extended
  double float_value = 0; // f16 .. f64 scalars
  /// Pointers: the GPU whose memory `pointer` addresses (a
  /// blocc::DeviceBuffer), or -1 for host memory.
  int device = -1;
  /// Pointers into a blocc::DeviceBuffer: the CUcontext it was allocated
  /// in; nullptr where the driver must be asked (other device memory).
  void *context = nullptr;

  static KernelArg of_pointer(void *p, size_t bytes = kUnknownSize) {
    KernelArg a;
    a.kind = Kind::Pointer;
    a.pointer = p;
    a.size_bytes = bytes;
    return a;
  }
  static KernelArg of_int(int64_t v) {
    KernelArg a;
    a.kind = Kind::Int;
    a.int_value = v;
    return a;
  }
  static KernelArg of_float(double v) {
    KernelArg a;
    a.kind = Kind::Float;
    a.float_value = v;
    return a;
  }
};

} // namespace blocc
