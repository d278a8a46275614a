// The argument buffers of one run of a generated kernel: inputs filled with
// seeded random data drawn as the kernel's facts describe, outputs filled
// with kPoisonByte, every buffer 64-byte aligned (the kernel declares its
// pointers 16-byte aligned).
#pragma once

#include "kernel_generator.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blocc::differential {

/// The byte every output element is filled with before a run.
constexpr unsigned char kPoisonByte = 0xAB;

class KernelMemory {
public:
  /// Buffers for `kernel`'s arguments, zeroed; the kernel must outlive it.
  explicit KernelMemory(const GeneratedKernel &kernel);
  /// Another run's buffers with the same contents.
  KernelMemory(const KernelMemory &other);
  KernelMemory &operator=(const KernelMemory &) = delete;

  /// Fresh inputs from `seed`, poisoned outputs. A float buffer gets the
  /// same values whatever its format (the draws depend only on the range
  /// and quantum), so a copy of the kernel with wider float buffers sees
  /// the same inputs.
  void fill(uint64_t seed);

  /// What an executor is handed: sized pointers and integer values.
  std::vector<KernelArg> arguments();

  const unsigned char *data(size_t argument) const;
  size_t bytes(size_t argument) const;

private:
  struct Buffer {
    explicit Buffer(size_t n);
    unsigned char *data() { return storage.data() + offset; }
    const unsigned char *data() const { return storage.data() + offset; }
    std::vector<unsigned char> storage;
    size_t offset = 0;
    size_t bytes;
  };
  const GeneratedKernel &kernel_;
  std::vector<Buffer> buffers_;
};

/// True when every byte of the element at `p` is kPoisonByte.
bool is_poison(ir::Scalar s, const unsigned char *p);

} // namespace blocc::differential
