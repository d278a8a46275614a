// Write-race detection for launches checked with BLOCC_CHECK=races: every
// element a program stores is recorded in a shadow map of the launch, and a
// store by one program instance of a value different from the one another
// instance stored at the same address is reported. Storing the same value
// from several programs is benign (Triton kernels often do), a program may
// overwrite its own stores, and atomics are not recorded (they are not
// races).
//
// The map holds one record per 64-byte line stored to, with the stores
// made in it, so that a chunk of a contiguous store costs one lookup.
// Thread-safe: lines are spread over shards, each behind its own mutex.
// Cost: about 10 bytes of shadow per byte stored (a line's record and 32
// bytes per element); a validation mode, not a fast one.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace blocc::runtime::cpu {

/// One stored element, as the shadow map keeps it.
struct StoreRecord {
  int64_t program = 0; // linear program index (x fastest, then y, then z)
  uint64_t bits = 0;   // the element's bytes, zero-extended
  int32_t bytes = 0;   // the element's size
  int32_t site = 0;    // the backend's number for the store op
  int32_t lane = 0;    // the element's index in the stored block
};

/// A store that races with an earlier one.
struct WriteRace {
  int32_t index = 0; // of the racing element in the recorded chunk
  uint64_t address = 0;
  StoreRecord earlier; // what another program stored there before
};

class WriteRaceDetector {
public:
  /// Records the elements `i < count` with `active[i]` that store `site`
  /// of program `program` writes: `bits[i]` (`bytes` wide) at
  /// `addresses[i]`, lane `lanes[i]` of its block. Stops at, and returns,
  /// the first one whose address another program stored different bits
  /// (or a different width) at in this launch.
  std::optional<WriteRace> record(int64_t program, int32_t site, int32_t bytes,
                                  int32_t count, const uint64_t *addresses,
                                  const uint64_t *bits, const uint8_t *active,
                                  const int32_t *lanes);

private:
  /// The stores made in one 64-byte line.
  struct Line {
    std::array<uint8_t, 64> slot{}; // by byte offset: 1 + index, or 0
    std::vector<std::pair<uint64_t, StoreRecord>> stores; // address, store
  };
  struct alignas(64) Shard {
    std::mutex mutex;
    std::unordered_map<uint64_t, Line> lines; // by address / 64
  };
  static constexpr size_t kShards = 64;
  std::array<Shard, kShards> shards_;
};

} // namespace blocc::runtime::cpu
