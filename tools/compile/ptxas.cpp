#include "tools/compile/ptxas.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace blocc::compile {

namespace {

std::optional<std::string> ptxas_on_path() {
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty())
      continue;
    std::filesystem::path candidate = std::filesystem::path(dir) / "ptxas";
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
  }
  return std::nullopt;
}

} // namespace

std::optional<cuda::PtxAssembler> find_ptxas() {
  if (std::optional<cuda::PtxAssembler> named = cuda::ptx_assembler())
    return named;
  if (std::optional<std::string> found = ptxas_on_path())
    return cuda::ptx_assembler_from_setting(found->c_str());
  return std::nullopt;
}

} // namespace blocc::compile
