// Host memory owned by a C++ object, aligned for the CPU backend's vectors.
// Kernels launched on host buffers run on a host executor (the CPU backend
// or the interpreter), which knows each buffer's extent, so checked mode
// (BLOCC_CHECK) reports accesses past its end:
//
//   blocc::HostBuffer<float> x(n), out(n);   // n zeros each
//   for (size_t i = 0; i < n; ++i) x[i] = ...;
//   add[{blocc::cdiv(n, 1024)}](x, x, out, n, 1024);
//   std::span<const float> result = out;
//
// Why not std::vector: its data is only aligned for T (16 bytes from
// malloc, in practice), while a HostBuffer starts on a 64-byte boundary: a
// cache line, and one AVX-512 vector, so the first vector of every program
// is whole and pointer arguments get the 16-byte-alignment specialization.
// It is move-only, so that two owners never free one allocation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace blocc {

template <typename T> class HostBuffer {
  static_assert(std::is_trivially_copyable_v<T> &&
                    std::is_trivially_destructible_v<T> && !std::is_const_v<T>,
                "blocc::HostBuffer holds kernel elements: trivially copyable "
                "scalar types (float, int32_t, blocc::half, ...)");

public:
  /// Bytes every buffer's data is aligned to.
  static constexpr size_t kAlignment = 64;

  HostBuffer() = default;
  /// `count` value-initialized (zero) elements.
  explicit HostBuffer(size_t count) : HostBuffer(count, T{}) {}
  /// `count` copies of `value`.
  HostBuffer(size_t count, const T &value) : data_(allocate(count)) {
    size_ = count;
    fill(value);
  }
  /// A copy of `elements`.
  explicit HostBuffer(std::span<const T> elements)
      : data_(allocate(elements.size())) {
    size_ = elements.size();
    if (size_)
      std::memcpy(data_, elements.data(), size_ * sizeof(T));
  }

  HostBuffer(HostBuffer &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  HostBuffer &operator=(HostBuffer &&other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  ~HostBuffer() { std::free(data_); }

  size_t size() const { return size_; }
  size_t size_bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  /// Null for an empty buffer.
  T *data() { return data_; }
  const T *data() const { return data_; }

  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  /// Element `i`; std::out_of_range past the end.
  T &at(size_t i) { return data_[checked(i)]; }
  const T &at(size_t i) const { return data_[checked(i)]; }

  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }

  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }
  operator std::span<T>() { return span(); }
  operator std::span<const T>() const { return span(); }

  /// Every element set to `value` (poisoning outputs in tests, say).
  void fill(const T &value) { std::fill_n(data_, size_, value); }

private:
  static T *allocate(size_t count) {
    if (count == 0)
      return nullptr;
    if (count > (std::numeric_limits<size_t>::max() - kAlignment) / sizeof(T))
      throw std::length_error("blocc::HostBuffer: " + std::to_string(count) +
                              " elements do not fit in memory");
    // aligned_alloc wants a multiple of the alignment.
    size_t bytes =
        (count * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
    void *p = std::aligned_alloc(kAlignment, bytes);
    if (!p)
      throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  size_t checked(size_t i) const {
    if (i >= size_)
      throw std::out_of_range("blocc::HostBuffer: element " +
                              std::to_string(i) + " of a buffer of " +
                              std::to_string(size_));
    return i;
  }

  T *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace blocc
