#include "backends/cpu/perf_map.h"

#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <unistd.h>

namespace blocc::cpu {

namespace {

bool perf_map_requested() {
  const char *env = std::getenv("BLOCC_PERF_MAP");
  return env && std::string_view(env) == "1";
}

/// The size of `symbol` in `object`'s symbol table, or 0 when it has none.
uint64_t symbol_size(std::string_view object, const std::string &symbol) {
  llvm::MemoryBufferRef buffer(llvm::StringRef(object.data(), object.size()),
                               symbol);
  auto file = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  const auto *elf =
      llvm::dyn_cast<llvm::object::ELFObjectFileBase>(file->get());
  if (!elf)
    return 0;
  for (const llvm::object::ELFSymbolRef &s : elf->symbols()) {
    auto name = s.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == symbol)
      return s.getSize();
  }
  return 0;
}

} // namespace

void record_in_perf_map(std::string_view object, const std::string &symbol,
                        const void *address) {
  if (!perf_map_requested())
    return;
  static std::mutex mutex;
  static std::atomic<bool> reported{false};
  const uint64_t size = symbol_size(object, symbol);
  const std::string path =
      "/tmp/perf-" + std::to_string(static_cast<long>(getpid())) + ".map";
  std::lock_guard<std::mutex> lock(mutex);
  std::FILE *map = std::fopen(path.c_str(), "a");
  bool written = map && std::fprintf(map, "%" PRIxPTR " %" PRIx64 " %s\n",
                                     reinterpret_cast<uintptr_t>(address), size,
                                     symbol.c_str()) > 0;
  if (map)
    written = std::fclose(map) == 0 && written;
  if (!written && !reported.exchange(true))
    std::cerr << "blocc: BLOCC_PERF_MAP=1, but " << path
              << " cannot be written; profiles will not name JIT-compiled "
                 "kernels\n";
}

} // namespace blocc::cpu
