#include "kernel_memory.h"

#include "host_element.h"
#include "random.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace blocc::differential {

KernelMemory::Buffer::Buffer(size_t n) : storage(n + 64), bytes(n) {
  auto address = reinterpret_cast<uintptr_t>(storage.data());
  offset = (64 - address % 64) % 64;
}

KernelMemory::KernelMemory(const GeneratedKernel &kernel) : kernel_(kernel) {
  for (const ArgumentSpec &a : kernel.arguments) {
    size_t bytes = a.kind == ArgumentSpec::Kind::Buffer
                       ? static_cast<size_t>(a.buffer.elements) *
                             static_cast<size_t>(element_bytes(a.buffer.dtype))
                       : 0;
    buffers_.emplace_back(bytes);
  }
}

KernelMemory::KernelMemory(const KernelMemory &other)
    : KernelMemory(other.kernel_) {
  for (size_t i = 0; i < buffers_.size(); ++i)
    std::memcpy(buffers_[i].data(), other.buffers_[i].data(),
                buffers_[i].bytes);
}

void KernelMemory::fill(uint64_t seed) {
  Random rng(seed);
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const ArgumentSpec &a = kernel_.arguments[i];
    if (a.kind != ArgumentSpec::Kind::Buffer)
      continue;
    const BufferSpec &b = a.buffer;
    int bytes = element_bytes(b.dtype);
    unsigned char *p = buffers_[i].data();
    if (b.is_output) {
      std::memset(p, kPoisonByte, buffers_[i].bytes);
      continue;
    }
    const ValueFacts &v = b.values;
    for (int64_t e = 0; e < b.elements; ++e, p += bytes) {
      if (ir::is_float(b.dtype) && v.special && rng.below(8) == 0) {
        static const double specials[] = {
            std::numeric_limits<double>::infinity(),
            -std::numeric_limits<double>::infinity(),
            std::numeric_limits<double>::quiet_NaN()};
        write_float(b.dtype, specials[rng.below(3)], p);
      } else if (ir::is_float(b.dtype)) {
        // Multiples of 2^quantum: exact in the buffer's format.
        auto lo = static_cast<int64_t>(std::ceil(std::ldexp(v.lo, -v.quantum)));
        auto hi =
            static_cast<int64_t>(std::floor(std::ldexp(v.hi, -v.quantum)));
        write_float(b.dtype, std::ldexp(double(rng.between(lo, hi)), v.quantum),
                    p);
      } else if (v.hi - v.lo >= 0x1p53) {
        // The whole type: the low bits of a random word.
        write_integer(b.dtype, static_cast<int64_t>(rng.next()), p);
      } else {
        write_integer(
            b.dtype,
            rng.between(static_cast<int64_t>(v.lo), static_cast<int64_t>(v.hi)),
            p);
      }
    }
  }
}

std::vector<KernelArg> KernelMemory::arguments() {
  std::vector<KernelArg> args;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const ArgumentSpec &a = kernel_.arguments[i];
    if (a.kind == ArgumentSpec::Kind::Buffer)
      args.push_back(
          KernelArg::of_pointer(buffers_[i].data(), buffers_[i].bytes));
    else
      args.push_back(KernelArg::of_int(a.value));
  }
  return args;
}

const unsigned char *KernelMemory::data(size_t argument) const {
  return buffers_[argument].data();
}

size_t KernelMemory::bytes(size_t argument) const {
  return buffers_[argument].bytes;
}

bool is_poison(ir::Scalar s, const unsigned char *p) {
  for (int i = 0; i < element_bytes(s); ++i)
    if (p[i] != kPoisonByte)
      return false;
  return true;
}

} // namespace blocc::differential
