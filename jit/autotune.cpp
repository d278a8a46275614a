#include "blocc/autotune.h"

#include "ir/error.h"
#include "runtime/cuda/device.h"

#ifdef BLOCC_HAVE_CPU_BACKEND
#include "runtime/cpu/disk_cache.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace blocc {

int64_t Config::operator[](const std::string &name) const {
  for (const auto &[constant, value] : constants_)
    if (constant == name)
      return value;
  throw Error("configuration " + str() + " sets no constant '" + name + "'");
}

std::string Config::str() const {
  std::string out;
  for (const auto &[name, value] : constants_)
    out += name + "=" + std::to_string(value) + " ";
  return out + "num_warps=" + std::to_string(num_warps_) +
         " num_stages=" + std::to_string(num_stages_);
}

namespace detail {

namespace {

bool print_autotuning() {
  const char *env = std::getenv("BLOCC_PRINT_AUTOTUNING");
  return env && *env && std::string(env) != "0";
}

/// FNV-1a: a hash that is the same in every build, for file names.
uint64_t stable_hash(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", (unsigned long long)v);
  return text;
}

std::string value_text(const ArgValue &a) {
  switch (a.kind) {
  case ArgValue::Kind::Pointer:
    return std::string("*") + std::string(ir::scalar_name(a.dtype));
  case ArgValue::Kind::Int:
    return std::to_string(a.int_value);
  case ArgValue::Kind::Float: {
    std::ostringstream out;
    out << a.float_value;
    return out.str();
  }
  }
  return "?";
}

/// The GPU of the launch's pointers, or -1 for host memory.
int device_of(const std::vector<ArgValue> &args) {
  for (const ArgValue &a : args)
    if (a.kind == ArgValue::Kind::Pointer && a.device >= 0)
      return a.device;
  return -1;
}

/// Contents of the arguments trial runs must leave as they were.
class Snapshot {
public:
  Snapshot(const std::vector<ArgValue> &args,
           const std::vector<size_t> &indices, int device)
      : device_(device) {
    for (size_t i : indices) {
      const ArgValue &a = args[i];
      Saved s{a.pointer, std::vector<char>(a.size_bytes)};
      if (a.device >= 0)
        cuda::copy_to_host(s.bytes.data(), a.pointer, a.size_bytes, a.device);
      else
        std::memcpy(s.bytes.data(), a.pointer, a.size_bytes);
      saved_.push_back(std::move(s));
    }
  }
  void restore() const {
    for (const Saved &s : saved_) {
      if (device_ >= 0)
        cuda::copy_from_host(s.pointer, s.bytes.data(), s.bytes.size(),
                             device_);
      else
        std::memcpy(s.pointer, s.bytes.data(), s.bytes.size());
    }
  }

private:
  struct Saved {
    void *pointer;
    std::vector<char> bytes;
  };
  int device_;
  std::vector<Saved> saved_;
};

/// The median time of one `run()` in ms: batches of at least a
/// millisecond (doubling from one run, at most 1024), the median of five,
/// each waited for on `device` (>= 0: a GPU) and followed by the
/// snapshot's restore.
double median_ms(const std::function<void()> &run, int device,
                 Snapshot &snapshot) {
  using clock = std::chrono::steady_clock;
  auto time_batch = [&](int batch) {
    auto start = clock::now();
    for (int i = 0; i < batch; ++i)
      run();
    if (device >= 0)
      cuda::synchronize(device);
    double seconds =
        std::chrono::duration<double>(clock::now() - start).count();
    snapshot.restore();
    return seconds;
  };
  int batch = 1;
  double seconds = 0;
  for (;;) {
    seconds = time_batch(batch);
    if (seconds >= 1e-3 || batch >= 1024)
      break;
    batch *= 2;
  }
  std::vector<double> per_run{seconds / batch};
  for (int sample = 0; sample < 4; ++sample)
    per_run.push_back(time_batch(batch) / batch);
  std::sort(per_run.begin(), per_run.end());
  return per_run[per_run.size() / 2] * 1e3;
}

} // namespace

struct Autotuner::State {
  KernelBase &kernel;
  std::vector<Config> configs;
  std::vector<std::string> key;
  AutotuneOptions options;
  std::string what; // "autotune of kernel 'matmul'"
  std::vector<std::optional<size_t>> tuned_slot; // per parameter
  std::vector<size_t> key_params, restore_params;
  std::optional<std::string> file; // where choices persist
  mutable std::mutex mutex;
  std::map<std::string, size_t> choice; // key -> configuration index
  bool loaded = false;
  size_t tunings = 0;

  State(KernelBase &k, std::vector<Config> c, std::vector<std::string> key_,
        AutotuneOptions o)
      : kernel(k), configs(std::move(c)), key(std::move(key_)),
        options(std::move(o)), what("autotune of kernel '" + k.name() + "'") {}

  size_t parameter(const std::string &name, const std::string &role) const {
    const auto &params = kernel.params();
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].name == name)
        return i;
    std::string names;
    for (const auto &p : params)
      names += (names.empty() ? "" : ", ") + p.name;
    throw Error(what + ": " + role + " names '" + name +
                "', which is not a parameter of the kernel (its parameters: " +
                names + ")");
  }

  void validate() {
    if (!kernel.definition_error().empty())
      throw Error(what + ": " + kernel.definition_error());
    if (!kernel.has_parameter_names())
      throw Error(what +
                  ": the kernel's parameters have no names; define it "
                  "with bl::kernel(\"" +
                  kernel.name() + "\", {\"a\", ...}, ...)");
    if (configs.empty())
      throw Error(what + ": no configuration to choose from");
    const auto &params = kernel.params();
    tuned_slot.assign(params.size(), std::nullopt);
    const Config &first = configs[0];
    for (size_t c = 0; c < configs.size(); ++c) {
      const Config &config = configs[c];
      const std::string role =
          "configuration " + std::to_string(c) + " (" + config.str() + ")";
      if (config.constants().size() != first.constants().size())
        throw Error(what + ": " + role + " sets " +
                    std::to_string(config.constants().size()) +
                    " constants, configuration 0 sets " +
                    std::to_string(first.constants().size()) +
                    ": every configuration sets the same ones");
      for (size_t j = 0; j < config.constants().size(); ++j) {
        const std::string &name = config.constants()[j].first;
        size_t p = parameter(name, role);
        if (params[p].kind != ParamInfo::Kind::Constant)
          throw Error(what + ": " + role + " sets '" + name + "', a " +
                      params[p].type_name +
                      " parameter; only bl::Const parameters are tuned");
        if (c == 0)
          tuned_slot[p] = j;
        else if (tuned_slot[p] != j)
          throw Error(what + ": " + role + " sets '" + name +
                      "', which configuration 0 does not set in that place: "
                      "every configuration sets the same constants in the "
                      "same order");
      }
    }
    for (const std::string &name : key) {
      size_t p = parameter(name, "the key");
      if (tuned_slot[p])
        throw Error(what + ": the key names '" + name +
                    "', which the configurations set");
      key_params.push_back(p);
    }
    for (const std::string &name : options.restore) {
      size_t p = parameter(name, "restore");
      if (params[p].kind != ParamInfo::Kind::Pointer)
        throw Error(what + ": restore names '" + name + "', a " +
                    params[p].type_name +
                    " parameter; only pointer arguments are restored");
      restore_params.push_back(p);
    }
  }

  /// Where this kernel's choices persist, if the cache is on.
  void choose_file() {
#ifdef BLOCC_HAVE_CPU_BACKEND
    auto directory = runtime::cpu::cache_directory_from_environment();
    if (!directory)
      return;
    std::string signature = kernel.name();
    for (const auto &p : kernel.params())
      signature += "|" + p.name + ":" + p.type_name;
    for (const Config &c : configs)
      signature += "|" + c.str();
    file = *directory + "/autotune/" + kernel.name() + "-" +
           hex(stable_hash(signature)) + ".tsv";
#endif
  }

  /// Reads back the choices saved by earlier processes (once).
  void load() {
    if (loaded)
      return;
    loaded = true;
    if (!file)
      return;
    std::ifstream in(*file);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string key_text, index_text, config_text;
      if (!std::getline(fields, key_text, '\t') ||
          !std::getline(fields, index_text, '\t') ||
          !std::getline(fields, config_text, '\t'))
        continue;
      char *end = nullptr;
      unsigned long index = std::strtoul(index_text.c_str(), &end, 10);
      // A line that does not name one of these configurations is ignored.
      if (*end || index >= configs.size() ||
          configs[index].str() != config_text)
        continue;
      choice[key_text] = index;
      report("read back", key_text, index, -1);
    }
  }

  void save(const std::string &key_text, size_t index, double ms) {
    if (!file)
      return;
    namespace fs = std::filesystem;
    std::error_code error;
    fs::create_directories(fs::path(*file).parent_path(), error);
    // The whole file again, renamed into place: readers never see half.
    std::string temporary = *file + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(temporary);
      std::ifstream in(*file);
      std::string line;
      while (std::getline(in, line))
        if (line.substr(0, line.find('\t')) != key_text)
          out << line << "\n";
      out << key_text << "\t" << index << "\t" << configs[index].str() << "\t"
          << ms << "\n";
      if (!out)
        return; // a cache that cannot be written only costs a retune
    }
    fs::rename(temporary, *file, error);
    if (error)
      fs::remove(temporary, error);
  }

  void report(const char *how, const std::string &key_text, size_t index,
              double ms) const {
    if (!print_autotuning())
      return;
    std::fprintf(stderr, "autotune: kernel '%s' key %s: %s (%s",
                 kernel.name().c_str(), key_text.c_str(),
                 configs[index].str().c_str(), how);
    if (ms >= 0)
      std::fprintf(stderr, ", %.4g ms", ms);
    std::fprintf(stderr, ")\n");
  }

  std::vector<ArgValue> with_config(const std::vector<ArgValue> &args,
                                    const Config &config) const {
    const auto &params = kernel.params();
    std::vector<ArgValue> full;
    size_t next = 0;
    for (size_t p = 0; p < params.size(); ++p) {
      if (!tuned_slot[p]) {
        full.push_back(args[next++]);
        continue;
      }
      ArgValue a;
      a.kind = ArgValue::Kind::Int;
      a.dtype = params[p].dtype;
      a.int_value = config.constants()[*tuned_slot[p]].second;
      a.cpp_type = std::string(ir::scalar_name(a.dtype));
      full.push_back(a);
    }
    return full;
  }

  std::string key_of(const std::vector<ArgValue> &full) const {
    const auto &params = kernel.params();
    std::string text;
    for (size_t p : key_params)
      text += params[p].name + "=" + value_text(full[p]) + ",";
    // The kernel's other constants select other code.
    for (size_t p = 0; p < params.size(); ++p)
      if (params[p].kind == ParamInfo::Kind::Constant && !tuned_slot[p])
        text += params[p].name + "=" + value_text(full[p]) + ",";
    int device = device_of(full);
    return text + "on=" +
           (device < 0
                ? "host"
                : cuda::properties(device).name + "#" + std::to_string(device));
  }
};

Autotuner::Autotuner(KernelBase &kernel, std::vector<Config> configs,
                     std::vector<std::string> key, AutotuneOptions options)
    : state_(std::make_unique<State>(kernel, std::move(configs), std::move(key),
                                     std::move(options))) {
  state_->validate();
  state_->choose_file();
}

Autotuner::~Autotuner() = default;

void Autotuner::launch(const GridForConfig &grid,
                       const std::vector<ArgValue> &args,
                       LaunchOptions options) {
  State &s = *state_;
  check_arity(args);
  auto run = [&](size_t index) {
    const Config &config = s.configs[index];
    LaunchOptions o = options;
    o.num_warps = config.num_warps();
    o.num_stages = config.num_stages();
    s.kernel.launch(grid(config), s.with_config(args, config), o);
  };
  // The key needs the constants' places filled; any configuration does.
  const std::string key = s.key_of(s.with_config(args, s.configs[0]));
  std::unique_lock<std::mutex> lock(s.mutex);
  s.load();
  auto known = s.choice.find(key);
  if (known != s.choice.end()) {
    size_t index = known->second;
    lock.unlock();
    run(index);
    return;
  }
  auto [best, best_ms] = tune(args, run);
  s.choice[key] = best;
  s.save(key, best, best_ms);
  s.report("measured best", key, best, best_ms);
  lock.unlock();
  run(best);
}

void Autotuner::check_arity(const std::vector<ArgValue> &args) const {
  const State &s = *state_;
  size_t tuned = 0;
  for (const auto &slot : s.tuned_slot)
    tuned += slot.has_value();
  const size_t expected = s.kernel.params().size() - tuned;
  if (args.size() == expected)
    return;
  std::string names;
  for (const auto &[name, value] : s.configs[0].constants())
    names += (names.empty() ? "" : ", ") + name;
  throw Error(s.what + ": takes " + std::to_string(expected) +
              " arguments (the kernel's parameters but the tuned " + names +
              "), got " + std::to_string(args.size()));
}

std::pair<size_t, double>
Autotuner::tune(const std::vector<ArgValue> &args,
                const std::function<void(size_t)> &run) {
  // Every configuration compiled, warmed up and timed, the memory the
  // kernel writes restored after each run.
  State &s = *state_;
  const int device = device_of(args);
  for (size_t p : s.restore_params) {
    const ArgValue &a = s.with_config(args, s.configs[0])[p];
    if (a.size_bytes == KernelArg::kUnknownSize)
      throw Error(s.what + ": restore names '" + s.kernel.params()[p].name +
                  "', whose size is unknown (a raw pointer): pass a "
                  "std::vector, std::span, HostBuffer or DeviceBuffer");
  }
  Snapshot snapshot(s.with_config(args, s.configs[0]), s.restore_params,
                    device);
  std::optional<size_t> best;
  double best_ms = 0;
  std::string failures;
  for (size_t index = 0; index < s.configs.size(); ++index) {
    try {
      run(index); // compiles; the first run also warms up
      if (device >= 0)
        cuda::synchronize(device);
      snapshot.restore();
      double ms = median_ms([&] { run(index); }, device, snapshot);
      ++s.tunings;
      if (!best || ms < best_ms) {
        best = index;
        best_ms = ms;
      }
    } catch (const std::exception &e) {
      snapshot.restore();
      failures += "\n  " + s.configs[index].str() + ": " + e.what();
    }
  }
  if (!best)
    throw Error(s.what + ": every configuration failed" + failures);
  if (!failures.empty() && print_autotuning())
    std::fprintf(stderr, "autotune: kernel '%s' skipped:%s\n",
                 s.kernel.name().c_str(), failures.c_str());
  return {*best, best_ms};
}

std::vector<std::pair<std::string, Config>> Autotuner::chosen() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::vector<std::pair<std::string, Config>> out;
  for (const auto &[key, index] : state_->choice)
    out.emplace_back(key, state_->configs[index]);
  return out;
}

size_t Autotuner::num_tunings() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->tunings;
}

} // namespace detail
} // namespace blocc
