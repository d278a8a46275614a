#include "runtime/cpu/disk_cache.h"

#include "runtime/cpu/compile_cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <vector>

namespace blocc::runtime::cpu {

namespace {

constexpr char kMagic[8] = {'B', 'L', 'O', 'C', 'C', 'K', 'C', '\n'};
/// Bumped whenever the layout below changes; entries of other versions are
/// rejected (and replaced).
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 48;
/// Larger files are not read (no kernel's object code comes near).
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

// Fields are little-endian whatever the host, so that an entry's bytes mean
// one thing (the target is part of the key anyway).
void put_u32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get_le(const std::string &in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

uint64_t content_hash(std::string_view key, std::string_view content) {
  return fnv1a(content, fnv1a(key));
}

std::string errno_text(int error) { return std::strerror(error); }

/// Which caches are open, and which problems were reported (each once).
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const DiskCache>> open;
  std::set<std::string> reported;
};
Registry &registry() {
  static Registry *r = new Registry; // outlives every static destructor
  return *r;
}

/// Writes `message` to stderr unless it was written before.
void warn_once(const std::string &message) {
  Registry &r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.reported.insert(message).second)
      return;
  }
  std::cerr << "blocc: warning: " << message << "\n";
}

void warn_unusable(const std::string &directory, const std::string &reason) {
  warn_once("not using the compile cache directory '" + directory +
            "': " + reason +
            "; kernels are compiled in every process. Choose another "
            "directory with BLOCC_CACHE_DIR=<dir>, or turn the disk cache "
            "off with BLOCC_CACHE_DIR=off");
}

/// mkdir -p with mode 0700 for every directory it creates. Empty on
/// success, else why not.
std::string make_directories(const std::string &path) {
  for (size_t end = 1; end <= path.size(); ++end) {
    if (end != path.size() && path[end] != '/')
      continue;
    std::string prefix = path.substr(0, end);
    if (prefix.back() == '/')
      continue; // "//"
    if (::mkdir(prefix.c_str(), 0700) == 0 || errno == EEXIST)
      continue;
    return "cannot create '" + prefix + "' (" + errno_text(errno) + ")";
  }
  return {};
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

/// The content of the entry `bytes` when it is a whole, uncorrupted entry
/// of `key` (disk_cache.h says what is checked).
CacheLookup verify_entry(std::string_view key, const std::string &bytes,
                         std::string &content) {
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0 ||
      get_le(bytes, 8, 4) != kFormatVersion ||
      get_le(bytes, 12, 4) != kHeaderBytes ||
      get_le(bytes, 16, 8) != fnv1a(key))
    return CacheLookup::Rejected;
  uint64_t key_bytes = get_le(bytes, 24, 8);
  uint64_t content_bytes = get_le(bytes, 32, 8);
  // Lengths are compared before they are added, so that none overflows.
  uint64_t body = bytes.size() - kHeaderBytes;
  if (key_bytes != key.size() || key_bytes > body ||
      content_bytes != body - key_bytes)
    return CacheLookup::Rejected;
  std::string_view stored_key(bytes.data() + kHeaderBytes, key_bytes);
  std::string_view stored(bytes.data() + kHeaderBytes + key_bytes,
                          content_bytes);
  if (stored_key != key ||
      get_le(bytes, 40, 8) != content_hash(stored_key, stored))
    return CacheLookup::Rejected;
  content.assign(stored);
  return CacheLookup::Hit;
}

} // namespace

std::optional<std::string> cache_directory_from_environment() {
  const char *chosen = std::getenv("BLOCC_CACHE_DIR");
  if (chosen && *chosen) {
    std::string value = chosen;
    if (value == "off" || value == "0")
      return std::nullopt;
    return value;
  }
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') // the XDG spec ignores relative values
    return std::string(xdg) + "/blocc";
  const char *home = std::getenv("HOME");
  if (home && *home)
    return std::string(home) + "/.cache/blocc";
  std::vector<char> buffer(16384);
  passwd entry{}, *found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) ==
          0 &&
      found && found->pw_dir && *found->pw_dir)
    return std::string(found->pw_dir) + "/.cache/blocc";
  warn_once("no home directory (HOME is unset): the compile cache is off; "
            "set BLOCC_CACHE_DIR=<dir> to keep compiled kernels");
  return std::nullopt;
}

DiskCache::DiskCache(std::string directory, int descriptor, uint64_t device,
                     uint64_t inode)
    : directory_(std::move(directory)), descriptor_(descriptor),
      device_(device), inode_(inode) {}

DiskCache::~DiskCache() {
  if (descriptor_ >= 0)
    ::close(descriptor_);
}

std::shared_ptr<const DiskCache> DiskCache::open(const std::string &directory) {
  Registry &r = registry();
  struct stat now {};
  bool exists = ::stat(directory.c_str(), &now) == 0;
  {
    // The same directory as before (not one renamed into its place): the
    // checks made when it was opened still hold.
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.open.find(directory);
    if (exists && it != r.open.end() &&
        it->second->device_ == static_cast<uint64_t>(now.st_dev) &&
        it->second->inode_ == static_cast<uint64_t>(now.st_ino))
      return it->second;
  }
  if (!exists) {
    std::string problem = make_directories(directory);
    if (!problem.empty()) {
      warn_unusable(directory, problem);
      return nullptr;
    }
  }
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    warn_unusable(directory, "cannot open it (" + errno_text(errno) + ")");
    return nullptr;
  }
  // Checked on the opened directory itself, not on its name.
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0)
    problem = "cannot inspect it (" + errno_text(errno) + ")";
  else if (st.st_uid != ::geteuid())
    problem = "it belongs to another user (uid " + std::to_string(st.st_uid) +
              "), who could plant code that blocc would run";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o",
                  static_cast<unsigned>(st.st_mode & 07777));
    problem = std::string("it is writable by other users (mode ") + mode +
              "), who could plant code that blocc would run; make it "
              "private with chmod 700";
  }
  if (!problem.empty()) {
    ::close(fd);
    warn_unusable(directory, problem);
    return nullptr;
  }
  std::shared_ptr<const DiskCache> cache(
      new DiskCache(directory, fd, static_cast<uint64_t>(st.st_dev),
                    static_cast<uint64_t>(st.st_ino)));
  std::lock_guard<std::mutex> lock(r.mutex);
  r.open[directory] = cache;
  return cache;
}

std::shared_ptr<const DiskCache> DiskCache::from_environment() {
  std::optional<std::string> directory = cache_directory_from_environment();
  return directory ? open(*directory) : nullptr;
}

std::string DiskCache::entry_name(std::string_view key) {
  return digest(key) + ".blocc";
}

/// Stamps the entry with the current time at the clock's full resolution.
/// The kernel stamps writes and `futimens(fd, nullptr)` with a coarse time
/// (one scheduler tick, a few ms), so an entry used just after another was
/// written would tie with it and eviction order would fall back to names.
static void mark_used(int fd) {
  timespec now{};
  if (::clock_gettime(CLOCK_REALTIME, &now) != 0) {
    ::futimens(fd, nullptr);
    return;
  }
  const timespec times[2] = {now, now};
  ::futimens(fd, times);
}

CacheLookup DiskCache::load(std::string_view key, std::string &content) const {
  int fd = ::openat(descriptor_, entry_name(key).c_str(),
                    O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return errno == ENOENT ? CacheLookup::Missing : CacheLookup::Rejected;
  struct stat st {};
  std::string bytes;
  bool complete = false;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) >= kHeaderBytes &&
      static_cast<uint64_t>(st.st_size) <= kMaxEntryBytes) {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done,
                          static_cast<off_t>(done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += static_cast<size_t>(n);
    }
    complete = done == bytes.size();
  }
  CacheLookup found =
      complete ? verify_entry(key, bytes, content) : CacheLookup::Rejected;
  // Just used: eviction takes it last (disk_cache_size.h).
  if (found == CacheLookup::Hit)
    mark_used(fd);
  ::close(fd);
  return found;
}

bool DiskCache::store(std::string_view key, std::string_view content,
                      uint64_t max_bytes) const {
  std::string bytes(kMagic, sizeof kMagic);
  put_u32(bytes, kFormatVersion);
  put_u32(bytes, static_cast<uint32_t>(kHeaderBytes));
  put_u64(bytes, fnv1a(key));
  put_u64(bytes, key.size());
  put_u64(bytes, content.size());
  put_u64(bytes, content_hash(key, content));
  bytes.append(key);
  bytes.append(content);

  // Unique among processes (a random token: pids repeat across the PID
  // namespaces of containers sharing a directory) and among this process's
  // threads (a counter). O_EXCL below would refuse a clash anyway.
  // The pid is read each time: a forked child keeps the token.
  static const std::string token = [] {
    std::random_device random;
    return digest(std::to_string(random()) + std::to_string(random()));
  }();
  static std::atomic<uint64_t> stores{0};
  const std::string name = entry_name(key);
  const std::string temporary = ".tmp-" + name + "-" +
                                std::to_string(::getpid()) + "-" + token + "-" +
                                std::to_string(stores++);
  std::string problem;
  int fd = ::openat(descriptor_, temporary.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    problem = errno_text(errno);
  } else {
    bool written = write_all(fd, bytes);
    int write_error = errno;
    if (written)
      mark_used(fd);
    bool closed = ::close(fd) == 0;
    if (!written || !closed)
      problem = errno_text(written ? errno : write_error);
    else if (::renameat(descriptor_, temporary.c_str(), descriptor_,
                        name.c_str()) != 0)
      problem = errno_text(errno);
    if (!problem.empty())
      ::unlinkat(descriptor_, temporary.c_str(), 0);
  }
  if (problem.empty()) {
    note_store(descriptor_, bytes.size(), max_bytes);
    return true;
  }
  warn_once("cannot write to the compile cache directory '" + directory_ +
            "' (" + problem +
            "): kernels are compiled but not kept for the next process. "
            "Choose another directory with BLOCC_CACHE_DIR=<dir>, or turn "
            "the disk cache off with BLOCC_CACHE_DIR=off");
  return false;
}

CacheUsage DiskCache::usage() const { return measure_usage(descriptor_); }

CacheUsage DiskCache::clear() const { return remove_all_entries(descriptor_); }

} // namespace blocc::runtime::cpu
