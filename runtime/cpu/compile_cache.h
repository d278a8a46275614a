// An in-memory cache of compiled kernels, safe to use from many threads:
// each key is compiled once, by the first thread that asks for it, while
// the others asking for the same key wait for that result. A compile that
// throws is not cached (the next request compiles again) and its error
// reaches every thread that waited for it.
//
// Keys are the full text that determines the result (the IR, the target,
// the compiler version), so two different kernels never share an entry;
// `digest` gives a short stable name for one (symbol names today, file
// names of the planned disk cache, which will verify content on read).
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

/// 64-bit FNV-1a of `text`, as 16 hex digits. Stable across runs and
/// machines; not a cryptographic hash.
inline std::string digest(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
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
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(key);
      if (it == entries_.end()) {
        result = promise.get_future().share();
        entries_.emplace(key, result);
        compile_here = true;
      } else {
        result = it->second;
      }
    }
    if (compile_here) {
      try {
        promise.set_value(compile());
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          entries_.erase(key);
        }
        promise.set_exception(std::current_exception());
      }
    }
    return result.get(); // rethrows the compile's error
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const T>>>
      entries_;
};

} // namespace blocc::runtime::cpu
