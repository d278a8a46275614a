// An in-memory cache of compiled kernels, safe to use from many threads:
// each key is compiled once, by the first thread that asks for it, while
// the others asking for the same key wait for that result. A compile that
// throws is not cached (the next request compiles again) and its error
// reaches every thread that waited for it.
//
// Keys are the full text that determines the result (the IR, the target,
// the compiler version), so two different kernels never share an entry;
// `digest` gives a short stable name for one (the file names of the disk
// cache, runtime/cpu/disk_cache.h, which sits behind this cache).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace blocc::runtime::cpu {

/// 64-bit FNV-1a of `text`, continuing from `h` (hash several pieces as
/// one). Stable across runs and machines; not a cryptographic hash.
inline uint64_t fnv1a(std::string_view text,
                      uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// `fnv1a(text)` as 16 hex digits.
inline std::string digest(std::string_view text) {
  uint64_t h = fnv1a(text);
  static const char hex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4)
    out[i] = hex[h & 15];
  return out;
}

template <typename T> class CompileCache {
public:
  using Compile = std::function<std::shared_ptr<const T>()>;

  /// The entry for `key`, compiled by `compile` if no thread did before.
  std::shared_ptr<const T> get(const std::string &key, const Compile &compile) {
    std::promise<std::shared_ptr<const T>> promise;
    std::shared_future<std::shared_ptr<const T>> result;
    bool compile_here = false;
    uint64_t ticket = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(key);
      if (it == entries_.end()) {
        result = promise.get_future().share();
        ticket = ++tickets_;
        entries_.emplace(key, Entry{result, ticket});
        compile_here = true;
      } else {
        result = it->second.result;
      }
    }
    if (compile_here) {
      try {
        promise.set_value(compile());
      } catch (...) {
        {
          // Only this compile's entry (clear() may have replaced it).
          std::lock_guard<std::mutex> lock(mutex_);
          auto it = entries_.find(key);
          if (it != entries_.end() && it->second.ticket == ticket)
            entries_.erase(it);
        }
        promise.set_exception(std::current_exception());
      }
    }
    return result.get(); // rethrows the compile's error
  }

  /// Forgets every entry (kernels already handed out stay valid): a test
  /// hook, so that a process can see what a fresh one would.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

private:
  struct Entry {
    std::shared_future<std::shared_ptr<const T>> result;
    uint64_t ticket; // which compile made it
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  uint64_t tickets_ = 0;
};

} // namespace blocc::runtime::cpu
