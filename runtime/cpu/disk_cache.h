// A directory of compiled kernels kept between processes
// (docs/architecture.md). It stores opaque bytes (the CPU backend's object
// code) under a text key (everything that determines them: IR, options,
// target, compiler version) and never trusts what it reads back:
//
// - The directory is private. It is created 0700 (missing parents too);
//   one that exists but is writable by group or others, or belongs to
//   another user, is not used (a warning on stderr, once per directory):
//   otherwise another user could plant code that blocc would run. It is
//   opened once and used through its file descriptor, so renaming another
//   directory into its place later changes nothing.
// - Each entry is one file, `<16 hex digits of the key's hash>.blocc`:
//     magic "BLOCCKC\n", format version, header size, hash of the key,
//     key length, content length, hash of key + content   (48 bytes)
//     the key, then the content.
//   A read checks every field, that the file has exactly that length, that
//   the stored key equals the key asked for (two keys with one hash are two
//   different kernels), and the content hash. Anything else (truncated,
//   corrupt, foreign, another format version) is a miss: the caller
//   compiles again and its store replaces the entry.
// - Stores write a temporary file in the same directory and rename it over
//   the entry, so readers see a whole old entry or a whole new one, and
//   processes storing the same entry at once are safe (the last rename
//   wins; both wrote the same bytes). No fsync: a crash may leave a torn
//   entry, which the next read rejects; a crash between write and rename
//   may leave a `.tmp-*` file behind, which nothing reads.
// - Bounded: a store may evict the least recently used entries (a hit
//   refreshes an entry's time) to keep the directory under a cap, 1 GiB by
//   default (disk_cache_size.h: BLOCC_CACHE_MAX_SIZE, how the size is
//   tracked without scanning, why eviction is safe beside other processes:
//   a read of an entry evicted meanwhile is a miss). `clear` removes every
//   entry; so does deleting the directory.
//
// Which directory ($BLOCC_CACHE_DIR, XDG, ~/.cache/blocc) and which cap are
// the caller's choice: `cache_directory_from_environment`,
// `cache_max_bytes_from_environment`. No LLVM here.
#pragma once

#include "runtime/cpu/disk_cache_size.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace blocc::runtime::cpu {

/// The directory the environment selects for the compile cache, or nullopt
/// when the cache is off:
///   BLOCC_CACHE_DIR=off or 0    off
///   BLOCC_CACHE_DIR=<dir>       <dir>   (an empty value counts as unset)
///   XDG_CACHE_HOME=<abs dir>    <abs dir>/blocc
///   otherwise                   $HOME/.cache/blocc (else the passwd entry's
///                               home; off when there is none)
std::optional<std::string> cache_directory_from_environment();

/// What a load found.
enum class CacheLookup {
  Hit,      // a verified entry
  Missing,  // no entry for the key
  Rejected, // an entry that failed verification (it is not used)
};

class DiskCache {
public:
  /// The cache in `directory` (created if missing), or nullptr when it
  /// cannot be used: not creatable, not a private directory of this user.
  /// The reason is written to stderr once per directory and process.
  /// Opening the same directory again returns the same cache.
  static std::shared_ptr<const DiskCache> open(const std::string &directory);

  /// The cache the environment selects now
  /// (`cache_directory_from_environment`), or nullptr when it is off or
  /// cannot be used. Read at every call, so that tests and programs may
  /// change BLOCC_CACHE_DIR between compiles.
  static std::shared_ptr<const DiskCache> from_environment();

  DiskCache(const DiskCache &) = delete;
  DiskCache &operator=(const DiskCache &) = delete;
  ~DiskCache();

  const std::string &directory() const { return directory_; }

  /// The content stored under `key`, when its entry passes every check. A
  /// hit marks the entry as just used (its modification time).
  CacheLookup load(std::string_view key, std::string &content) const;
  /// Writes (or replaces) the entry of `key`, then evicts the least
  /// recently used entries if the cache has passed `max_bytes`
  /// (kNoCacheLimit: never). False when it could not be written (a warning
  /// on stderr, once per directory): the cache is an optimization, so
  /// callers go on without it.
  bool store(std::string_view key, std::string_view content,
             uint64_t max_bytes = kDefaultCacheMaxBytes) const;

  /// The entries now and their total size (scans the directory).
  CacheUsage usage() const;
  /// Removes every entry; returns what it removed. Stores under way in
  /// other processes still land (their entries stay).
  CacheUsage clear() const;

  /// The file name of `key`'s entry (tests corrupt entries through it).
  static std::string entry_name(std::string_view key);

private:
  DiskCache(std::string directory, int descriptor, uint64_t device,
            uint64_t inode);
  friend struct DiskCacheRegistry;

  std::string directory_;
  int descriptor_ = -1;
  uint64_t device_ = 0, inode_ = 0;
};

} // namespace blocc::runtime::cpu
