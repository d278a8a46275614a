// What the compile-cache tests share: a private temporary directory per
// test (never the user's cache), scoped environment variables, the
// backend's cache counters as differences, and the entries of a cache
// directory.
#pragma once

#include "backends/cpu/cpu_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace blocc::cache_testing {

/// A fresh directory under $TMPDIR (else /tmp), removed with everything in
/// it at the end of the scope.
class TemporaryDirectory {
public:
  TemporaryDirectory() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/blocc-cache-test-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      ADD_FAILURE() << "cannot create a temporary directory " << pattern;
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    // Tests may leave it read-only or foreign-owned: make it removable.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory &) = delete;
  TemporaryDirectory &operator=(const TemporaryDirectory &) = delete;

  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const {
    return path_ + "/" + name;
  }

private:
  std::string path_;
};

/// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ScopedEnvironment(const char *name, const std::string &value)
      : ScopedEnvironment(name, value.c_str()) {}
  ~ScopedEnvironment() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnvironment(const ScopedEnvironment &) = delete;
  ScopedEnvironment &operator=(const ScopedEnvironment &) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

/// A test whose compiles use a cache directory of its own, starting from
/// an empty in-memory cache (what a fresh process sees).
class FreshCacheTest : public ::testing::Test {
protected:
  void SetUp() override { cpu::clear_memory_cache_for_testing(); }

  TemporaryDirectory temporary;
  const std::string directory = temporary / "cache";
  ScopedEnvironment cache_dir{"BLOCC_CACHE_DIR", directory};
};

/// The cache counters' growth since construction.
class CounterDelta {
public:
  CounterDelta() : start_(cpu::cache_counters()) {}
  cpu::CacheCounters operator()() const {
    cpu::CacheCounters now = cpu::cache_counters();
    return {now.jit_compiles - start_.jit_compiles,
            now.disk_hits - start_.disk_hits,
            now.disk_rejected - start_.disk_rejected,
            now.disk_writes - start_.disk_writes,
            now.disk_write_failures - start_.disk_write_failures};
  }

private:
  cpu::CacheCounters start_;
};

/// The names of the files in `directory` ending in `suffix`, sorted.
inline std::vector<std::string> files_in(const std::string &directory,
                                         const std::string &suffix = "") {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto &entry :
       std::filesystem::directory_iterator(directory, error)) {
    std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Cache entries (`*.blocc`) in `directory`.
inline std::vector<std::string> entries_in(const std::string &directory) {
  return files_in(directory, ".blocc");
}

/// Temporary files of stores (`.tmp-*`) in `directory`: a store leaves none
/// behind once it returns.
inline std::vector<std::string> temporaries_in(const std::string &directory) {
  std::vector<std::string> names = files_in(directory);
  names.erase(std::remove_if(names.begin(), names.end(),
                             [](const std::string &name) {
                               return name.rfind(".tmp-", 0) != 0;
                             }),
              names.end());
  return names;
}

inline std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_file(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

} // namespace blocc::cache_testing
