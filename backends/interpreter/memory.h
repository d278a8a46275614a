// The interpreter's view of memory: the kernel's pointer arguments as
// buffers, the provenance of addresses, and checked reads and writes of
// host memory.
//
// Every access of a load, store or atomic is checked lane by lane before
// the op touches memory (all lanes of a store before the first write), so
// an out-of-bounds kernel reports its first bad lane and corrupts nothing:
//  - an address whose provenance is an argument with a known size must lie,
//    with all of its bytes, inside that argument's buffer;
//  - an address whose provenance is an argument of unknown size (a raw
//    pointer) is trusted, as the hardware would;
//  - an address with no provenance (made by int_to_ptr from an integer that
//    lies in no sized buffer) is trusted only when some pointer argument
//    has an unknown size; otherwise it cannot point anywhere valid;
//  - addresses in the first page (below 4096) are null-pointer accesses;
//  - every address must be a multiple of the element size.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "runtime/kernel_args.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::ir {
class Function;
}

namespace blocc::interp {

/// A pointer argument as the launch handed it over.
struct ArgumentBuffer {
  int argument = 0; // index among the kernel's arguments
  std::string name; // ArgumentInfo::name; may be empty
  uint64_t base = 0;
  size_t size_bytes = KernelArg::kUnknownSize;

  bool sized() const { return size_bytes != KernelArg::kUnknownSize; }
  /// "argument 2 'out'" (or "argument 2" when unnamed)
  std::string describe() const;
};

enum class AccessKind { Load, Store, Atomic };

class Memory {
public:
  /// Records every pointer argument of `kernel` bound to `args` (already
  /// checked to match).
  Memory(const ir::Function &kernel, const std::vector<KernelArg> &args);

  /// The buffer of argument `argument` (which must be a pointer).
  const ArgumentBuffer &buffer(int32_t argument) const;

  /// The provenance an integer turned back into a pointer gets: the sized
  /// argument buffer holding `address` (the first one, when several
  /// overlap), else kNoProvenance.
  int32_t provenance_of(uint64_t address) const;

  /// Checks lane `lane` (of a value of `shape`) accessing `bytes` bytes at
  /// `address`; throws through `site` when the access is not allowed.
  void check(const ExecutionSite &site, AccessKind kind, int64_t lane,
             const std::vector<int64_t> &shape, uint64_t address,
             int32_t provenance, int bytes) const;

  /// Raw host memory access of 1, 2, 4 or 8 bytes (the low bytes of `raw`);
  /// callers check first.
  static uint64_t read(uint64_t address, int bytes);
  static void write(uint64_t address, int bytes, uint64_t raw);

private:
  std::vector<ArgumentBuffer> buffers_; // by argument index; base 0 if none
  std::vector<bool> is_pointer_;
  bool any_unsized_ = false;
};

} // namespace blocc::interp
