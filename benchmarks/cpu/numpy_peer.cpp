#include "numpy_peer.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {

namespace {

/// Runs a shell command, returning its exit status and output.
std::pair<int, std::string> run_command(const std::string &command) {
  std::string output;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return {-1, "popen failed"};
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    output.append(buffer, got);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string shell_quoted(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The value of "key": in a one-line JSON object of numbers and strings.
std::string json_field(const std::string &json, const std::string &key) {
  size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos)
    return "";
  at += key.size() + 3;
  while (at < json.size() && json[at] == ' ')
    ++at;
  if (at < json.size() && json[at] == '"') {
    size_t end = json.find('"', at + 1);
    return json.substr(at + 1, end - at - 1);
  }
  size_t end = json.find_first_of(",}", at);
  return json.substr(at, end - at);
}

/// A private temporary folder, removed with its files when destroyed.
struct TempFolder {
  std::string path;
  TempFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "blocc-bench-XXXXXX")
            .string();
    if (mkdtemp(pattern.data()))
      path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
  }
};

} // namespace

NumpyPeer::NumpyPeer(std::string script, int threads)
    : script_(std::move(script)), threads_(threads) {
  auto [status, output] = run_command("python3 -c 'import numpy'");
  available_ = status == 0;
  if (!available_)
    why_not_ = status == 127 ? "python3 not found"
                             : "python3 cannot import numpy (install it: "
                               "scripts/install-deps)";
}

std::string NumpyPeer::environment() const {
  std::string t = std::to_string(threads_);
  return "OPENBLAS_NUM_THREADS=" + t + " OMP_NUM_THREADS=" + t +
         " MKL_NUM_THREADS=" + t + " ";
}

std::optional<NumpyResult> NumpyPeer::run(const std::string &op,
                                          const std::vector<NumpyInput> &inputs,
                                          const std::string &shape,
                                          size_t output_count, int reps,
                                          int warmup) {
  TempFolder folder;
  if (folder.path.empty()) {
    why_not_ = "cannot create a temporary folder";
    return std::nullopt;
  }
  for (const NumpyInput &in : inputs) {
    std::ofstream file(folder.path + "/" + in.file, std::ios::binary);
    file.write(reinterpret_cast<const char *>(in.data),
               static_cast<std::streamsize>(in.count * sizeof(float)));
  }
  std::ofstream(folder.path + "/shape.txt") << shape << "\n";
  auto [status, output] =
      run_command(environment() + "python3 " + shell_quoted(script_) + " " +
                  op + " " + shell_quoted(folder.path) + " " +
                  std::to_string(reps) + " " + std::to_string(warmup));
  std::string median = json_field(output, "median_s");
  if (status != 0 || median.empty()) {
    why_not_ = "numpy_peer.py " + op + " failed: " + output;
    return std::nullopt;
  }
  NumpyResult result;
  result.median_seconds = std::strtod(median.c_str(), nullptr);
  result.description = "numpy " + json_field(output, "numpy") + ", " +
                       json_field(output, "blas");
  result.output.resize(output_count);
  std::ifstream file(folder.path + "/out.f32", std::ios::binary);
  file.read(reinterpret_cast<char *>(result.output.data()),
            static_cast<std::streamsize>(output_count * sizeof(float)));
  if (!file) {
    why_not_ = "numpy_peer.py wrote no result";
    return std::nullopt;
  }
  return result;
}

} // namespace bench
