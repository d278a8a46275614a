// The disk compile cache's size bound (disk_cache.h): the cap the
// environment sets, a size estimate shared by every process using the
// directory (so that a store costs a few bytes of I/O, not a directory
// scan), and least-recently-used eviction.
//
// - The cap: BLOCC_CACHE_MAX_SIZE (`cache_max_bytes_from_environment`),
//   1 GiB by default. Sizes are the entries' file sizes.
// - Recency is an entry's modification time: a store writes it, and a hit
//   sets it to now (DiskCache::load). Eviction removes the oldest entries
//   first.
// - The estimate lives in `.blocc-cache-size` in the cache directory, one
//   fixed-width line updated under flock: every store adds its entry's
//   size. The directory is scanned (and the estimate replaced by what the
//   scan found) when the estimate passes the cap, after every
//   kRescanEveryWrites stores (to catch what the estimate cannot see:
//   entries deleted by hand), and when the file is missing or unreadable.
//   A replaced entry is counted twice until the next scan: the estimate
//   only ever errs high, so the cache never stays above the cap unseen.
// - A scan over the cap removes the oldest entries until the total is at
//   most 90% of the cap (so that the next scan is some writes away), and
//   temporary files older than an hour (left by a crashed writer; live
//   writers rename theirs within milliseconds). One process evicts at a
//   time (flock on the directory); a store finding eviction under way goes
//   on without waiting, and the evicting process looks at the estimate
//   again when it is done, so writes made meanwhile are not forgotten.
// - Safe beside other processes: an entry is removed only if it is still
//   the file the scan saw (same inode and time), so a hit refreshing it or
//   a store renaming a new one over it keeps it; a reader holding an entry
//   open reads it whole after it is removed; a reader opening it afterwards
//   sees a miss and compiles. Temporary files of live writers are never
//   touched. Where flock is unavailable (some network file systems) it all
//   still works, with duplicated scans.
#pragma once

#include <cstdint>
#include <string_view>

namespace blocc::runtime::cpu {

constexpr uint64_t kDefaultCacheMaxBytes = uint64_t{1} << 30; // 1 GiB
constexpr uint64_t kNoCacheLimit = UINT64_MAX;
/// Stores between two scans that the estimate does not call for.
constexpr uint64_t kRescanEveryWrites = 512;

/// The cap BLOCC_CACHE_MAX_SIZE sets: unset or empty is
/// kDefaultCacheMaxBytes, `0` is kNoCacheLimit, else `parse_cache_size`.
/// Throws blocc::Error naming the variable and its value when malformed.
uint64_t cache_max_bytes_from_environment();

/// `value` as a number of bytes: decimal digits, optionally followed by K,
/// M, G or T (powers of 1024; any case; `KB` and `KiB` mean K too).
/// Throws blocc::Error naming `variable` and `value` when it is anything
/// else or does not fit in 64 bits.
uint64_t parse_cache_size(std::string_view variable, std::string_view value);

/// Entries of a cache directory and their total size.
struct CacheUsage {
  uint64_t entries = 0;
  uint64_t bytes = 0;
};

/// Whether `name` is a cache entry (`<16 hex digits>.blocc`) or a store's
/// temporary file (`.tmp-*`).
bool is_entry_name(std::string_view name);
bool is_temporary_name(std::string_view name);

/// After a store added an entry of `bytes` to the directory open as
/// `directory_fd`: adds it to the estimate and, when the estimate passes
/// `max_bytes` or a rescan is due, scans and evicts.
void note_store(int directory_fd, uint64_t bytes, uint64_t max_bytes);

/// What the directory holds now (a scan; it removes nothing).
CacheUsage measure_usage(int directory_fd);

/// Removes every entry (and stale temporary files; live writers' stay) and
/// returns what was removed.
CacheUsage remove_all_entries(int directory_fd);

} // namespace blocc::runtime::cpu
