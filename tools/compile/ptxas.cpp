#include "tools/compile/ptxas.h"

#include "ir/error.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace blocc::compile {

namespace {

/// A temporary directory removed with this object.
class TemporaryDirectory {
public:
  TemporaryDirectory() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "blocc-compile-XXXXXX")
            .string();
    if (!mkdtemp(pattern.data()))
      throw Error("cannot create a temporary directory for ptxas");
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

std::string quoted(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

} // namespace

std::optional<std::string> find_ptxas() {
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

std::string assemble_cubin(const std::string &ptxas, const std::string &ptx,
                           const std::string &arch) {
  TemporaryDirectory dir;
  const std::filesystem::path input = dir.path() / "kernel.ptx",
                              output = dir.path() / "kernel.cubin";
  {
    std::ofstream out(input, std::ios::binary);
    out << ptx;
  }
  const std::string command = quoted(ptxas) + " -arch=" + arch + " " +
                              quoted(input.string()) + " -o " +
                              quoted(output.string()) + " 2>&1";
  std::string said;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    throw Error("cannot run " + ptxas);
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe))
    said += buffer;
  const int status = pclose(pipe);
  if (status != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(ptxas + " -arch=" + arch + " rejected the PTX:\n" + said);
  std::ifstream in(output, std::ios::binary);
  std::ostringstream cubin;
  cubin << in.rdbuf();
  if (cubin.str().empty())
    throw Error(ptxas + " -arch=" + arch + " wrote no cubin:\n" + said);
  return cubin.str();
}

} // namespace blocc::compile
