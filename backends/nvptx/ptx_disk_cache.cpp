#include "backends/nvptx/ptx_disk_cache.h"

#include "runtime/cpu/disk_cache.h"
#include "runtime/cpu/disk_cache_size.h"
#include "source_fingerprint.h" // generated (CMakeLists.txt)

#include <llvm-c/Core.h>

#include <atomic>

namespace blocc::nvptx {

namespace {

struct Counters {
  std::atomic<size_t> hits{0}, rejected{0}, writes{0}, write_failures{0};
};
Counters &counters() {
  static Counters c;
  return c;
}

std::string disk_key(const std::string &key) {
  return ptx_compiler_version() + "\nptx\n" + key;
}

} // namespace

const std::string &ptx_compiler_version() {
  static const std::string version = [] {
    // The LLVM that runs, which may be a newer patch release of a shared
    // libLLVM than the headers blocc was built with.
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    return std::string("blocc ") + BLOCC_VERSION + " (nvptx sources " +
           BLOCC_NVPTX_SOURCE_FINGERPRINT + "), LLVM " + std::to_string(major) +
           "." + std::to_string(minor) + "." + std::to_string(patch);
  }();
  return version;
}

std::optional<std::string> load_cached_ptx(const std::string &key) {
  std::shared_ptr<const runtime::cpu::DiskCache> disk =
      runtime::cpu::DiskCache::from_environment();
  if (!disk)
    return std::nullopt;
  std::string ptx;
  switch (disk->load(disk_key(key), ptx)) {
  case runtime::cpu::CacheLookup::Hit:
    ++counters().hits;
    return ptx;
  case runtime::cpu::CacheLookup::Rejected:
    ++counters().rejected;
    return std::nullopt;
  case runtime::cpu::CacheLookup::Missing:
    return std::nullopt;
  }
  return std::nullopt;
}

void store_cached_ptx(const std::string &key, const std::string &ptx) {
  std::shared_ptr<const runtime::cpu::DiskCache> disk =
      runtime::cpu::DiskCache::from_environment();
  if (!disk)
    return;
  const uint64_t max_bytes = runtime::cpu::cache_max_bytes_from_environment();
  ++(disk->store(disk_key(key), ptx, max_bytes) ? counters().writes
                                                : counters().write_failures);
}

std::string cached_cubin(const cuda::PtxAssembler &assembler,
                         const std::string &key, const std::string &ptx,
                         const std::string &what) {
  const std::string cubin_key =
      key + "\ncubin of " + assembler.path + " (CUDA " +
      cuda::cuda_release_name(assembler.version) + ")";
  if (std::optional<std::string> cached = load_cached_ptx(cubin_key))
    return std::move(*cached);
  std::string cubin = cuda::assemble_ptx(assembler, ptx, what);
  store_cached_ptx(cubin_key, cubin);
  return cubin;
}

PtxDiskCounters ptx_disk_counters() {
  const Counters &c = counters();
  return {c.hits.load(), c.rejected.load(), c.writes.load(),
          c.write_failures.load()};
}

} // namespace blocc::nvptx
