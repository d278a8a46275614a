#include "runtime/cuda/ptx_assembler.h"

#include "ir/error.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace blocc::cuda {

namespace {

constexpr const char *kSetting = "BLOCC_PTXAS";

/// A private directory for one assembly, removed with what is in it.
class ScratchDirectory {
public:
  ScratchDirectory() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/blocc-ptxas-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data()))
      throw Error("cannot create a directory for the PTX assembler under " +
                  pattern.substr(0, pattern.rfind('/')) + ": " +
                  std::strerror(errno));
    path_ = buffer.data();
  }
  ~ScratchDirectory() {
    for (const char *name : {"/kernel.ptx", "/kernel.cubin", "/messages.txt"})
      ::unlink((path_ + name).c_str());
    ::rmdir(path_.c_str());
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;
  std::string file(const char *name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Runs `arguments` (the program first, not searched on PATH) with its
/// standard output and error in the file `messages`; its exit status, or
/// -1 when it could not start or did not exit.
int run_program(const std::vector<std::string> &arguments,
                const std::string &messages) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, messages.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char *> argv;
  for (const std::string &a : arguments)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int started =
      ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0)
    return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

} // namespace

int parse_ptxas_version(std::string_view text) {
  constexpr std::string_view kRelease = "release ";
  size_t at = text.find(kRelease);
  if (at == std::string_view::npos)
    return 0;
  int major = 0, minor = 0;
  std::string rest(text.substr(at + kRelease.size(), 16));
  if (std::sscanf(rest.c_str(), "%d.%d", &major, &minor) != 2 || major <= 0 ||
      minor < 0 || minor > 9)
    return 0;
  return 1000 * major + 10 * minor;
}

std::string cuda_release_name(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

std::optional<PtxAssembler> ptx_assembler_from_setting(const char *setting) {
  if (!setting || !*setting || std::string_view(setting) == "driver")
    return std::nullopt;
  PtxAssembler assembler{setting, 0};
  ScratchDirectory scratch;
  std::string messages = scratch.file("messages.txt");
  int status = run_program({assembler.path, "--version"}, messages);
  std::string said = trimmed(read_file(messages));
  if (status == 0)
    assembler.version = parse_ptxas_version(said);
  if (assembler.version == 0)
    throw Error(std::string(kSetting) + "='" + assembler.path +
                "' is not a PTX assembler blocc can run: `" + assembler.path +
                " --version` " +
                (status == -1
                     ? std::string("did not run")
                     : "exited with status " + std::to_string(status)) +
                (said.empty() ? std::string() : " and said:\n" + said) +
                "\nname the ptxas of a CUDA toolkit (or of PyPI's "
                "nvidia-cuda-nvcc), or 'driver' for the driver's JIT");
  return assembler;
}

const std::optional<PtxAssembler> &ptx_assembler() {
  static const std::optional<PtxAssembler> chosen =
      ptx_assembler_from_setting(std::getenv(kSetting));
  return chosen;
}

std::string ptx_target(const std::string &ptx, const std::string &what) {
  constexpr std::string_view kTarget = ".target ";
  size_t at = ptx.find(kTarget);
  if (at != std::string::npos) {
    size_t begin = at + kTarget.size();
    size_t end = ptx.find_first_of(" ,\n", begin);
    std::string target = ptx.substr(begin, end - begin);
    if (target.rfind("sm_", 0) == 0)
      return target;
  }
  throw Error(what + ": its PTX names no .target sm_ architecture");
}

std::string assemble_ptx(const PtxAssembler &assembler, const std::string &ptx,
                         const std::string &what) {
  ScratchDirectory scratch;
  std::string input = scratch.file("kernel.ptx");
  std::string output = scratch.file("kernel.cubin");
  std::string messages = scratch.file("messages.txt");
  {
    std::ofstream out(input, std::ios::binary);
    out << ptx;
    if (!out.flush())
      throw Error(what + ": cannot write its PTX to " + input);
  }
  int status = run_program(
      {assembler.path, "-arch=" + ptx_target(ptx, what), "-o", output, input},
      messages);
  std::string cubin = read_file(output);
  if (status != 0 || cubin.empty()) {
    std::string said = trimmed(read_file(messages));
    throw Error(what + ": the PTX assembler " + assembler.path + " (CUDA " +
                cuda_release_name(assembler.version) + ") failed" +
                (said.empty() ? std::string() : "; it said:\n" + said));
  }
  return cubin;
}

std::string driver_assembler_warning(int driver_version, const char *setting) {
  if ((setting && *setting) ||
      driver_version >= kFirstAssemblerWithoutKnownMiscompiles)
    return "";
  return "blocc: warning: the PTX compiler of this CUDA " +
         cuda_release_name(driver_version) +
         " driver miscompiles some kernels that keep many booleans live "
         "(CUDA 13.5's compiles them right); set " +
         kSetting + " to the ptxas of CUDA " +
         cuda_release_name(kFirstAssemblerWithoutKnownMiscompiles) +
         " or newer (pip install nvidia-cuda-nvcc: nvidia/cu13/bin/ptxas), "
         "or " +
         kSetting + "=driver to keep the driver's and drop this warning";
}

} // namespace blocc::cuda
