#include "runtime/cpu/write_race_detector.h"

namespace blocc::runtime::cpu {

namespace {

/// A 64-bit mix (splitmix64's finalizer), to spread lines over shards.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

} // namespace

std::optional<WriteRace>
WriteRaceDetector::record(int64_t program, int32_t site, int32_t bytes,
                          int32_t count, const uint64_t *addresses,
                          const uint64_t *bits, const uint8_t *active,
                          const int32_t *lanes) {
  std::unique_lock<std::mutex> lock;
  uint64_t current = 0; // the line `line` is, + 1 (0: none yet)
  Line *line = nullptr;
  for (int32_t i = 0; i < count; ++i) {
    if (!active[i])
      continue;
    uint64_t address = addresses[i];
    if ((address >> 6) + 1 != current) {
      Shard &shard = shards_[mix(address >> 6) % kShards];
      // One lock at a time: holding one while taking another could
      // deadlock with a thread doing the opposite.
      if (lock.owns_lock())
        lock.unlock();
      lock = std::unique_lock<std::mutex>(shard.mutex);
      line = &shard.lines[address >> 6];
      current = (address >> 6) + 1;
    }
    StoreRecord store{program, bits[i], bytes, site, lanes[i]};
    uint8_t &slot = line->slot[address & 63];
    if (slot == 0) {
      if (line->stores.empty())
        line->stores.reserve(64 / static_cast<size_t>(bytes > 0 ? bytes : 1));
      line->stores.emplace_back(address, store);
      slot = static_cast<uint8_t>(line->stores.size());
      continue;
    }
    StoreRecord &earlier = line->stores[slot - 1u].second;
    if (earlier.program == program) {
      earlier = store; // a program's later store replaces its earlier one
      continue;
    }
    if (earlier.bits == store.bits && earlier.bytes == store.bytes)
      continue; // the same value: benign
    return WriteRace{i, address, earlier};
  }
  return std::nullopt;
}

} // namespace blocc::runtime::cpu
