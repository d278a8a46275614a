// blocc-compile's command line (tools/README.md has the manual).
#pragma once

#include <string>
#include <vector>

namespace blocc::compile {

/// One target of --target: the host's x86 ("cpu", "cpu:x86-64-v3") or an
/// NVIDIA GPU architecture ("sm_80", "sm_90a").
struct Target {
  enum class Kind { Cpu, Gpu } kind = Kind::Cpu;
  std::string name;           ///< "cpu:native", "sm_90"
  std::string cpu;            ///< Cpu: an LLVM CPU name or "native"
  int sm = 0;                 ///< Gpu: 80, 86, 89, 90
  bool arch_specific = false; ///< Gpu: sm_90a
};

enum class Cubin { Auto, On, Off };

struct Options {
  // Where the kernel comes from: a library of exported kernels with a
  // signature, or textual IR of one specialization.
  std::string library;
  std::string kernel;
  std::string signature;
  bool signature_given = false;
  std::string ir_file;

  std::vector<Target> targets; ///< default: cpu
  std::string output;          ///< -o: the path of the outputs, without suffix
  std::string name;            ///< default: output's file name
  std::string outer_namespace; ///< --namespace
  int num_warps = 4;
  Cubin cubin = Cubin::Auto;
  bool help = false;
};

/// Throws blocc::Error naming the option for every mistake: an unknown
/// option, a missing value or required option, an unknown target, a name
/// that is not a C++ identifier, warps that are not a power of two.
Options parse_options(const std::vector<std::string> &arguments);

/// The manual's summary, for --help.
const char *usage();

} // namespace blocc::compile
