#include "runtime/cpu/disk_cache_size.h"

#include "ir/error.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <tuple>
#include <vector>

namespace blocc::runtime::cpu {

namespace {

constexpr char kStateFile[] = ".blocc-cache-size";
// Its one line: a tag with the format version, the estimate, the bytes ever
// added, the stores since the last scan. Fixed width, so that a rewrite
// never leaves a longer old tail behind.
constexpr char kStateWritten[] = "blocc-cache-size 1 %020llu %020llu %020llu\n";
constexpr char kStateRead[] = "blocc-cache-size 1 %20llu %20llu %20llu\n%n";
/// Temporary files older than this were left by a writer that crashed.
constexpr time_t kStaleTemporarySeconds = 3600;
/// Scan rounds one eviction may take when stores keep arriving meanwhile.
constexpr int kMaxEvictionRounds = 8;

/// A file descriptor, closed (and so unlocked) at the end of its scope.
class Descriptor {
public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

private:
  int fd_;
};

/// flock, retried when a signal interrupts it. False when not locked.
bool lock(int fd, int operation) {
  while (::flock(fd, operation) != 0)
    if (errno != EINTR)
      return false;
  return true;
}

/// The shared estimate. An unknown estimate (no file, or one a crash cut
/// short) counts as due for a scan.
struct SizeState {
  uint64_t estimate = 0;    // bytes of entries, erring high
  uint64_t added_total = 0; // bytes ever added (to tell what a scan missed)
  uint64_t writes = kRescanEveryWrites; // stores since the last scan

  bool scan_due(uint64_t max_bytes) const {
    return max_bytes != kNoCacheLimit &&
           (estimate > max_bytes || writes >= kRescanEveryWrites);
  }
};

/// `.blocc-cache-size`, locked for one read-modify-write. Unlockable or
/// unopenable files still work, as a less exact estimate.
class LockedState {
public:
  explicit LockedState(int directory_fd)
      : fd_(::openat(directory_fd, kStateFile,
                     O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {
    if (fd_.valid())
      lock(fd_.get(), LOCK_EX);
  }

  bool usable() const { return fd_.valid(); }

  SizeState read() const {
    char text[128] = {};
    ssize_t n = ::pread(fd_.get(), text, sizeof text - 1, 0);
    SizeState s;
    unsigned long long estimate = 0, added = 0, writes = 0;
    int used = 0;
    if (n > 0 &&
        std::sscanf(text, kStateRead, &estimate, &added, &writes, &used) == 3 &&
        used == n) {
      s.estimate = estimate;
      s.added_total = added;
      s.writes = writes;
    }
    return s;
  }

  void write(const SizeState &s) const {
    char text[128];
    int n = std::snprintf(text, sizeof text, kStateWritten,
                          static_cast<unsigned long long>(s.estimate),
                          static_cast<unsigned long long>(s.added_total),
                          static_cast<unsigned long long>(s.writes));
    if (::pwrite(fd_.get(), text, static_cast<size_t>(n), 0) != n)
      return; // the next reader finds it unknown and scans
  }

private:
  Descriptor fd_;
};

struct EntryFile {
  std::string name;
  uint64_t bytes = 0;
  timespec modified{};
  ino_t inode = 0;
};

bool same_time(const timespec &a, const timespec &b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/// The directory's entries; removes temporary files older than
/// kStaleTemporarySeconds on the way.
std::vector<EntryFile> scan(int directory_fd) {
  std::vector<EntryFile> entries;
  int fd = ::openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return entries;
  DIR *dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return entries;
  }
  const time_t now = std::time(nullptr);
  while (const dirent *d = ::readdir(dir)) {
    std::string_view name = d->d_name;
    bool entry = is_entry_name(name), temporary = is_temporary_name(name);
    struct stat st {};
    if ((!entry && !temporary) ||
        ::fstatat(directory_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    if (entry)
      entries.push_back({d->d_name, static_cast<uint64_t>(st.st_size),
                         st.st_mtim, st.st_ino});
    else if (now - st.st_mtim.tv_sec > kStaleTemporarySeconds)
      ::unlinkat(directory_fd, d->d_name, 0);
  }
  ::closedir(dir);
  return entries;
}

CacheUsage total_of(const std::vector<EntryFile> &entries) {
  CacheUsage usage;
  for (const EntryFile &e : entries) {
    ++usage.entries;
    usage.bytes += e.bytes;
  }
  return usage;
}

/// Removes `e` unless it changed since the scan (a hit refreshed it, or a
/// store replaced it). True when it is gone.
bool remove_if_unchanged(int directory_fd, const EntryFile &e) {
  struct stat st {};
  if (::fstatat(directory_fd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT; // another process removed it
  if (st.st_ino != e.inode || !same_time(st.st_mtim, e.modified))
    return false;
  return ::unlinkat(directory_fd, e.name.c_str(), 0) == 0 || errno == ENOENT;
}

/// Scans, and when the entries pass `max_bytes` removes the least recently
/// used until they take at most 90% of it. Returns what is left.
CacheUsage evict_least_recently_used(int directory_fd, uint64_t max_bytes) {
  std::vector<EntryFile> entries = scan(directory_fd);
  CacheUsage left = total_of(entries);
  if (left.bytes <= max_bytes)
    return left;
  std::sort(entries.begin(), entries.end(),
            [](const EntryFile &a, const EntryFile &b) {
              return std::tie(a.modified.tv_sec, a.modified.tv_nsec, a.name) <
                     std::tie(b.modified.tv_sec, b.modified.tv_nsec, b.name);
            });
  const uint64_t low_water = max_bytes - max_bytes / 10;
  for (const EntryFile &e : entries) {
    if (left.bytes <= low_water)
      break;
    if (remove_if_unchanged(directory_fd, e)) {
      --left.entries;
      left.bytes -= e.bytes;
    }
  }
  return left;
}

/// Evicts when the estimate says a scan is due, unless another process is
/// evicting (it looks at the estimate again when done).
void evict_if_due(int directory_fd, uint64_t max_bytes) {
  for (int round = 0; round < kMaxEvictionRounds; ++round) {
    {
      // A lock of its own on the directory (a fresh open file description,
      // so that threads of one process exclude each other too).
      Descriptor evicting(
          ::openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!evicting.valid())
        return;
      if (!lock(evicting.get(), LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK)
        return; // other errors: no locks here; evict unlocked
      uint64_t added_before = 0;
      {
        LockedState state(directory_fd);
        SizeState s = state.read();
        if (!s.scan_due(max_bytes))
          return;
        added_before = s.added_total;
      }
      CacheUsage left = evict_least_recently_used(directory_fd, max_bytes);
      LockedState state(directory_fd);
      SizeState s = state.read();
      // What was stored during the scan, which the scan may have missed.
      uint64_t added_since =
          s.added_total >= added_before ? s.added_total - added_before : 0;
      s.estimate = left.bytes + added_since;
      s.writes = 0;
      state.write(s);
    }
    // Unlocked now: a store that found the lock taken has already added
    // its bytes, so this sees them.
    if (!LockedState(directory_fd).read().scan_due(max_bytes))
      return;
  }
}

uint64_t digits_value(std::string_view digits, bool &fits) {
  uint64_t v = 0;
  for (char c : digits) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10)
      fits = false;
    v = v * 10 + d;
  }
  return v;
}

} // namespace

uint64_t parse_cache_size(std::string_view variable, std::string_view value) {
  auto malformed = [&](const std::string &why) {
    return Error(std::string(variable) + "='" + std::string(value) + "' " +
                 why +
                 ": write a number of bytes, optionally with a K, M, G or T "
                 "suffix (powers of 1024), e.g. " +
                 std::string(variable) + "=512M; 0 means no limit");
  };
  size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9')
    ++digits;
  if (digits == 0)
    throw malformed("is not a size");
  std::string suffix;
  for (char c : value.substr(digits))
    suffix.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A'
                                                            : c)); // any case
  int shift = -1;
  const char *units[] = {"", "K", "M", "G", "T"};
  for (int i = 0; i < 5; ++i) {
    std::string unit = units[i];
    if (suffix == unit ||
        (i > 0 && (suffix == unit + "B" || suffix == unit + "IB")))
      shift = 10 * i;
  }
  if (suffix == "B")
    shift = 0;
  if (shift < 0)
    throw malformed("is not a size");
  bool fits = true;
  uint64_t number = digits_value(value.substr(0, digits), fits);
  if (!fits || (shift > 0 && number > (UINT64_MAX >> shift)))
    throw malformed("is too large");
  return number << shift;
}

uint64_t cache_max_bytes_from_environment() {
  const char *value = std::getenv("BLOCC_CACHE_MAX_SIZE");
  if (!value || !*value)
    return kDefaultCacheMaxBytes;
  uint64_t bytes = parse_cache_size("BLOCC_CACHE_MAX_SIZE", value);
  return bytes == 0 ? kNoCacheLimit : bytes;
}

bool is_entry_name(std::string_view name) {
  constexpr std::string_view kSuffix = ".blocc";
  if (name.size() != 16 + kSuffix.size() || name.substr(16) != kSuffix)
    return false;
  return std::all_of(name.begin(), name.begin() + 16, [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

bool is_temporary_name(std::string_view name) {
  return name.rfind(".tmp-", 0) == 0;
}

void note_store(int directory_fd, uint64_t bytes, uint64_t max_bytes) {
  bool due = false;
  {
    LockedState state(directory_fd);
    if (!state.usable())
      return;
    SizeState s = state.read();
    s.estimate += bytes;
    s.added_total += bytes;
    ++s.writes;
    state.write(s);
    due = s.scan_due(max_bytes);
  }
  if (due)
    evict_if_due(directory_fd, max_bytes);
}

CacheUsage measure_usage(int directory_fd) {
  return total_of(scan(directory_fd));
}

CacheUsage remove_all_entries(int directory_fd) {
  CacheUsage removed;
  for (const EntryFile &e : scan(directory_fd)) {
    if (::unlinkat(directory_fd, e.name.c_str(), 0) == 0) {
      ++removed.entries;
      removed.bytes += e.bytes;
    }
  }
  // Unknown, so that the next store scans: stores racing with the removal
  // may have left entries. The bytes ever added stay, for an eviction
  // under way to count what it missed.
  LockedState state(directory_fd);
  if (state.usable()) {
    SizeState s = state.read();
    s.estimate = 0;
    s.writes = kRescanEveryWrites;
    state.write(s);
  }
  return removed;
}

} // namespace blocc::runtime::cpu
