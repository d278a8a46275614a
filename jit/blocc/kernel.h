// bl::kernel: turns a C++ callable into a launchable, specializing kernel.
//
//   auto add = bl::kernel("add", [](bl::Ptr<float> x, bl::i32 n,
//                                   bl::Const<int> BLOCK) { ... });
//   add[{bl::cdiv(n, 1024)}](xs, n, 1024);
//
// Parameter names, optional, come before the callable (a C++ lambda does
// not carry them): they name the arguments in error messages and in the
// IR, and are the keywords Python callers use (bindings/):
//
//   auto add = bl::kernel("add", {"x", "n", "BLOCK"}, [](...) { ... });
//
// Each launch computes a specialization key from its arguments (the values
// of Const parameters, pointer 16-byte alignment, integer divisibility by
// 16 and equality to 1, as Triton specializes), traces the callable once per
// key, runs the generic passes, and executes the result on the executor the
// launch selects (LaunchOptions::backend, $BLOCC_BACKEND; see
// jit/executor.h): the reference interpreter or the CPU backend.
#pragma once

#include "blocc/dtype.h"
#include "blocc/tensor.h"
#include "runtime/cuda/device_buffer.h"
#include "runtime/host_buffer.h"
#include "runtime/kernel_args.h"

#include <memory>
#include <mutex>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace blocc {

/// Which executor runs a launch. Auto runs a launch with device buffers
/// (blocc::DeviceBuffer) on the GPU backend, on the GPU they live on
/// (jit/gpu_launch.cpp); for host memory it follows $BLOCC_BACKEND
/// (`interpreter` or `cpu`) when set, else runs on the CPU backend where
/// blocc was built with it, and on the interpreter elsewhere
/// (jit/executor.cpp). The CPU backend checks memory accesses only in
/// checked mode (Check below, BLOCC_CHECK=1); the interpreter always does.
enum class Backend {
  Auto,        // the best available for the arguments' memory
  Interpreter, // the reference interpreter (element by element)
  Cpu,         // the CPU backend: LLVM-compiled vector code, OpenMP grid
  Gpu,         // the GPU backend: PTX through LLVM's NVPTX target, CUDA
};

/// What a launch checks while it runs (checked mode). Default follows
/// $BLOCC_CHECK: `1` or `bounds` is Bounds, `races` is Races, `0`, `off`
/// or unset is Off; any other value is an error.
///
/// Bounds: every active lane of every load, store and atomic is checked
/// against the buffer of the kernel argument its pointer derives from,
/// before it touches memory; a violation is a blocc::Error naming the
/// kernel, the program id, the op and its source line, the lane, the
/// address and the buffer's bounds. Only buffers passed with their extent
/// (std::vector, std::span, a sized buffer) are checked; a raw pointer's
/// extent is unknown, so accesses through it are checked only for null and
/// misaligned addresses. A failing store writes nothing; what other
/// programs of the launch (and earlier ops of the failing one) wrote stays
/// written.
///
/// Races: Bounds, and a program storing a value different from what another
/// program of the same launch stored at that address is reported as a
/// write race (storing the same value is benign; atomics never race).
///
/// The interpreter always checks bounds. On the CPU backend a checked
/// kernel is compiled separately (unchecked kernels pay nothing); checks
/// cost a few compares per vector of a contiguous access, race detection a
/// shadow-map update per stored element.
enum class Check {
  Default, // $BLOCC_CHECK, else Off
  Off,
  Bounds,
  Races,
};

/// What runs a launch on host memory that asks for `backend` (Auto resolved
/// as a launch resolves it), in words: "CPU backend (x86_64-pc-linux-gnu
/// znver4, 512-bit vectors; 2 threads)" or "reference interpreter". For
/// programs that report where their results came from (the tutorials).
std::string host_backend_description(Backend backend = Backend::Auto);

/// Empties the CPU backend's disk compile cache: removes every compiled
/// kernel from the directory BLOCC_CACHE_DIR selects now (default
/// $XDG_CACHE_HOME/blocc, else ~/.cache/blocc), so that processes compile
/// again. Returns how many kernels it removed (0 when the cache is off or
/// blocc has no CPU backend). Kernels this process has compiled stay
/// usable. The cache also bounds itself (BLOCC_CACHE_MAX_SIZE, 1 GiB by
/// default; least recently used kernels go first): see
/// runtime/cpu/README.md.
size_t clear_compile_cache();

struct LaunchOptions {
  int num_warps = 4;
  int num_stages = 3;
  Backend backend = Backend::Auto;
  Check check = Check::Default;
  /// The CUDA stream a GPU launch is queued on, as an opaque handle: a
  /// CUstream or cudaStream_t (`torch.cuda.current_stream().cuda_stream`
  /// from Python). nullptr: the default stream of the buffers' context.
  /// The launch is asynchronous either way (nothing waits for the GPU);
  /// on a stream created with CU_STREAM_NON_BLOCKING, wait for the stream
  /// (cuStreamSynchronize) before reading results with to_host(), which
  /// copies on the default stream. The stream must belong to the context
  /// the buffers were allocated in. Host launches ignore it.
  void *stream = nullptr;
};

/// A stage of compiling a kernel, whose text inspection shows (BLOCC_DUMP,
/// Kernel::asm_for, Python's kernel.asm), in pipeline order.
enum class Stage {
  Traced,  ///< "traced": the block IR as the trace built it
  Ir,      ///< "ir": after the generic passes (ir::default_pipeline):
           ///< what every backend compiles
  Layouts, ///< "layouts" (GPU): the IR with the layout chosen for each
           ///< block value (backends/nvptx/print_layouts.h), like ttgir
  Llir,    ///< "llir": the backend's LLVM IR after -O3 (NVVM for GPUs)
  Ptx,     ///< "ptx" (GPU)
  Asm,     ///< "asm" (CPU): the x86 assembly of the code the JIT links
};

/// "traced", "ir", "layouts", "llir", "ptx", "asm".
const char *stage_name(Stage stage);

/// What inspection compiles for: where the code would run.
struct Target {
  enum class Kind {
    Interpreter, ///< no backend: the IR is what runs (traced, ir)
    Cpu,         ///< the CPU backend, for this machine as the JIT compiles
                 ///< (traced, ir, llir, asm)
    Gpu,         ///< the GPU backend (traced, ir, layouts, llir, ptx)
  };
  Kind kind = Kind::Cpu;
  std::string arch;  ///< Gpu: "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"
  int num_warps = 4; ///< Gpu: warps per program
  Check check = Check::Off; ///< Cpu: the checked variant (BLOCC_CHECK)
  int num_stages = 3;       ///< Gpu: stages of loops feeding dots (1: none)

  static Target interpreter() { return {Kind::Interpreter, "", 4, Check::Off}; }
  /// Check::Default: the variant a launch compiles under $BLOCC_CHECK.
  static Target cpu(Check check = Check::Off) {
    return {Kind::Cpu, "", 4, check};
  }
  /// Compile-only: no GPU or CUDA driver is needed.
  static Target gpu(std::string arch = "sm_90", int num_warps = 4,
                    int num_stages = 3) {
    return {Kind::Gpu, std::move(arch), num_warps, Check::Off, num_stages};
  }

  /// The target's stages, in pipeline order.
  std::vector<Stage> stages() const;
  /// "interpreter", "cpu", "cpu (checked: bounds)", "sm_90 (4 warps)".
  std::string str() const;
};

/// The text of each stage of one kernel specialization compiled for one
/// target (Kernel::asm_for). BLOCC_DUMP prints the same texts.
struct Stages {
  std::string kernel;         ///< "softmax"
  std::string specialization; ///< its constants: "BLOCK=1024", or ""
  std::string target; ///< Target::str(), with the CPU's name for the CPU:
                      ///< "cpu (x86_64-pc-linux-gnu znver4, 512-bit vectors)"
  struct Text {
    Stage stage;
    std::string text;
  };
  std::vector<Text> texts; ///< the stages asked for, in pipeline order

  /// The text of `stage`; throws blocc::Error when it was not compiled
  /// (not a stage of the target: "ptx" of a CPU target).
  const std::string &operator[](Stage stage) const;
  /// The line BLOCC_DUMP prints above `stage`'s text:
  /// "// ===== blocc: ptx of kernel 'softmax' (BLOCK=1024) for sm_90 (4 warps)"
  std::string header(Stage stage) const;
};

namespace detail {

/// What a kernel parameter is, as declared in the callable's signature.
struct ParamInfo {
  enum class Kind { Pointer, Scalar, Constant } kind;
  DType dtype;           // pointee for pointers
  std::string type_name; // "bl::Ptr<f32>", "bl::i32", "bl::Const<int>"
  std::string name;      // "x"; empty where the kernel names no parameters
};

/// "kernel 'add', argument 3 'out' (bl::Ptr<f32>)": how messages name
/// argument `index` (from 0) of a launch.
std::string argument_name(const std::string &kernel, size_t index,
                          const ParamInfo &param);

/// Who launches: messages advise in the caller's terms (blocc::DeviceBuffer
/// and Backend::Gpu for C++; arrays, tensors and backend='gpu' for Python,
/// whose launches come through bindings/export's C interface).
enum class Caller { Cpp, Python };

/// One launch argument as the caller passed it, before it is checked
/// against the parameter it binds to.
struct ArgValue {
  enum class Kind { Pointer, Int, Float } kind;
  DType dtype = int32;    // pointers: the pointee; scalars: the C++ type
  bool read_only = false; // const T*, std::span<const T>, const vector
  void *pointer = nullptr;
  size_t size_bytes = KernelArg::kUnknownSize;
  int64_t int_value = 0;
  double float_value = 0;
  std::string cpp_type;    // for messages: "std::vector<float>"
  int device = -1;         // pointers into GPU memory: the GPU; -1: host memory
  void *context = nullptr; // DeviceBuffers: the CUcontext they live in
};

template <typename T> std::string cpp_name() {
  return std::string(ir::scalar_name(dtype_of<T>()));
}

template <typename T>
ArgValue pointer_arg(T *p, size_t count, bool read_only, std::string what) {
  ArgValue a;
  a.kind = ArgValue::Kind::Pointer;
  a.dtype = dtype_of<T>();
  a.read_only = read_only;
  a.pointer = const_cast<std::remove_const_t<T> *>(p);
  a.size_bytes = count == KernelArg::kUnknownSize ? count : count * sizeof(T);
  a.cpp_type = std::move(what);
  return a;
}

/// "const " for read-only element types, in messages.
template <typename T> std::string const_prefix() {
  return std::is_const_v<T> ? "const " : "";
}

template <typename T> ArgValue to_arg(T *p) {
  return pointer_arg(p, KernelArg::kUnknownSize, std::is_const_v<T>,
                     const_prefix<T>() + cpp_name<T>() + "*");
}
template <typename T> ArgValue to_arg(std::vector<T> &v) {
  return pointer_arg(v.data(), v.size(), false,
                     "std::vector<" + cpp_name<T>() + ">");
}
template <typename T> ArgValue to_arg(const std::vector<T> &v) {
  return pointer_arg(v.data(), v.size(), true,
                     "const std::vector<" + cpp_name<T>() + ">");
}
template <typename T, size_t N> ArgValue to_arg(std::span<T, N> s) {
  std::string extent = N == std::dynamic_extent ? "" : ", " + std::to_string(N);
  return pointer_arg(s.data(), s.size(), std::is_const_v<T>,
                     "std::span<" + const_prefix<T>() + cpp_name<T>() + extent +
                         ">");
}
template <typename T> ArgValue to_arg(DeviceBuffer<T> &b) {
  ArgValue a = pointer_arg(b.data(), b.size(), false,
                           "blocc::DeviceBuffer<" + cpp_name<T>() + ">");
  a.device = b.device();
  a.context = b.context();
  return a;
}
template <typename T> ArgValue to_arg(const DeviceBuffer<T> &b) {
  ArgValue a = pointer_arg(b.data(), b.size(), true,
                           "const blocc::DeviceBuffer<" + cpp_name<T>() + ">");
  a.device = b.device();
  a.context = b.context();
  return a;
}
template <typename T> ArgValue to_arg(HostBuffer<T> &b) {
  return pointer_arg(b.data(), b.size(), false,
                     "blocc::HostBuffer<" + cpp_name<T>() + ">");
}
template <typename T> ArgValue to_arg(const HostBuffer<T> &b) {
  return pointer_arg(b.data(), b.size(), true,
                     "const blocc::HostBuffer<" + cpp_name<T>() + ">");
}
template <typename T>
requires std::is_arithmetic_v<T> ArgValue to_arg(T v) {
  ArgValue a;
  if constexpr (std::is_floating_point_v<T>) {
    a.kind = ArgValue::Kind::Float;
    a.float_value = static_cast<double>(v);
  } else {
    a.kind = ArgValue::Kind::Int;
    a.int_value = static_cast<int64_t>(v);
  }
  if constexpr (std::is_same_v<T, long long>)
    a.dtype = int64;
  else if constexpr (std::is_same_v<T, unsigned long long>)
    a.dtype = uint64;
  else if constexpr (std::is_same_v<T, char>)
    a.dtype = int8;
  else
    a.dtype = dtype_of<T>();
  a.cpp_type = std::string(ir::scalar_name(a.dtype));
  return a;
}
inline ArgValue to_arg(half h) { return to_arg(static_cast<float>(h)); }
inline ArgValue to_arg(bfloat16_t h) { return to_arg(static_cast<float>(h)); }
inline ArgValue to_arg(const ArgValue &a) { return a; }
template <typename T> ArgValue to_arg(const Const<T> &c) {
  return to_arg(c.value());
}

template <typename P> struct ParamTraits {
  static_assert(sizeof(P) == 0,
                "blocc: kernel parameters must be bl::Ptr<T>, a scalar type "
                "(bl::i32, bl::f32, ...) or bl::Const<T>");
};
template <typename T> struct ParamTraits<Ptr<T>> {
  static ParamInfo info() {
    return {ParamInfo::Kind::Pointer, dtype_of<T>(),
            "bl::Ptr<" + cpp_name<T>() + ">", ""};
  }
};
template <typename T> struct ParamTraits<ScalarParam<T>> {
  static ParamInfo info() {
    return {ParamInfo::Kind::Scalar, dtype_of<T>(), "bl::" + cpp_name<T>(), ""};
  }
};
template <typename T> struct ParamTraits<Const<T>> {
  static ParamInfo info() {
    return {ParamInfo::Kind::Constant, dtype_of<T>(),
            "bl::Const<" + cpp_name<T>() + ">", ""};
  }
};

template <typename F> struct Signature : Signature<decltype(&F::operator())> {};
template <typename C, typename R, typename... P>
struct Signature<R (C::*)(P...) const> {
  using Params = std::tuple<std::remove_cvref_t<P>...>;
};
template <typename C, typename R, typename... P>
struct Signature<R (C::*)(P...)> {
  using Params = std::tuple<std::remove_cvref_t<P>...>;
};
template <typename R, typename... P> struct Signature<R (*)(P...)> {
  using Params = std::tuple<std::remove_cvref_t<P>...>;
};

/// The values a trace binds parameters to: a function argument for pointers
/// and scalars, the launch value for constants.
struct TraceInputs {
  std::vector<ir::Value *> arguments; // per parameter (nullptr for constants)
  std::vector<ArgValue> constants;    // per parameter
};

template <typename P> struct IsConst : std::false_type {};
template <typename T> struct IsConst<Const<T>> : std::true_type {};

template <typename P> P make_param(const TraceInputs &in, size_t i) {
  if constexpr (IsConst<P>::value) {
    const ArgValue &a = in.constants[i];
    using T = typename P::value_type;
    return P(a.kind == ArgValue::Kind::Float ? static_cast<T>(a.float_value)
                                             : static_cast<T>(a.int_value));
  } else {
    return P(Tensor(in.arguments[i]));
  }
}

/// The non-template heart of every kernel: specialization, the compile
/// cache, checks of launch arguments, and execution.
class KernelBase {
public:
  KernelBase(std::string name, std::vector<ParamInfo> params,
             std::source_location loc);
  virtual ~KernelBase();

  const std::string &name() const { return name_; }
  const std::vector<ParamInfo> &params() const { return params_; }
  /// Where bl::kernel was called: "file.cpp:12".
  std::string definition_site() const;

  /// Names the parameters, one name per parameter, each a C identifier,
  /// no two alike (bl::kernel's name list does this). A kernel defined
  /// without names may be named once, before its first launch (bindings
  /// that export it); renaming a named kernel differently is an error.
  void name_parameters(const std::vector<std::string> &names);
  bool has_parameter_names() const {
    return !params_.empty() && !params_[0].name.empty();
  }
  /// What is wrong with the kernel's definition (bad parameter names given
  /// to bl::kernel), or "". Such a kernel cannot be launched: launches and
  /// exports report this message. (Throwing from bl::kernel would end a
  /// program whose kernels are namespace-scope variables before main.)
  const std::string &definition_error() const { return definition_error_; }

  void launch(const Grid &grid, const std::vector<ArgValue> &args,
              const LaunchOptions &options, Caller caller = Caller::Cpp);
  /// The texts of `stages` (empty: every stage of the target) of the
  /// specialization these arguments select, compiled for `target`; traces
  /// it if needed. Compile-only: no GPU is needed. Throws blocc::Error for
  /// a stage the target does not have, a bad target, a backend this build
  /// lacks, and ops the backend does not lower.
  Stages inspect(const std::vector<ArgValue> &args, const Target &target,
                 const std::vector<Stage> &stages = {});
  /// The IR (after the generic passes) of the specialization these
  /// arguments select; traces it if needed.
  std::string ir(const std::vector<ArgValue> &args);
  /// The specialization these arguments select, compiled if needed.
  const ir::Function &specialize(const std::vector<ArgValue> &args);
  /// Number of distinct specializations traced so far.
  size_t num_specializations() const;

protected:
  virtual void invoke(const TraceInputs &inputs) = 0;
  /// name_parameters, keeping a failure as the definition error.
  void name_parameters_at_definition(const std::vector<std::string> &names);

private:
  struct Compiled;
  /// The specialization `args` select, traced if new; checks them first.
  const Compiled &compile(const std::vector<ArgValue> &args);
  /// The same for arguments already checked.
  const Compiled &find_or_trace(const std::vector<ArgValue> &args);
  std::unique_ptr<Compiled> trace(const std::vector<ArgValue> &args);
  void check_arguments(const std::vector<ArgValue> &args) const;

  std::string name_;
  std::vector<ParamInfo> params_;
  std::source_location loc_;
  std::string definition_error_;
  mutable std::mutex mutex_;
  struct KeyHash {
    size_t operator()(const std::vector<uint64_t> &words) const noexcept;
  };
  // Specializations by key (find_or_trace): words, not text, so that a
  // relaunch formats nothing.
  std::unordered_map<std::vector<uint64_t>, std::unique_ptr<Compiled>, KeyHash>
      cache_;
};

} // namespace detail

template <typename F> class Kernel;

/// A launch in progress: kernel[grid] gives one, calling it launches.
template <typename F> class Launch {
public:
  Launch(Kernel<F> &k, Grid grid, LaunchOptions options)
      : kernel_(k), grid_(grid), options_(options) {}
  template <typename... A> void operator()(A &&...args) {
    kernel_.launch(grid_, {detail::to_arg(std::forward<A>(args))...}, options_);
  }
  Launch &with(LaunchOptions o) {
    options_ = o;
    return *this;
  }

private:
  Kernel<F> &kernel_;
  Grid grid_;
  LaunchOptions options_;
};

template <typename F> class Kernel : public detail::KernelBase {
  using Params = typename detail::Signature<F>::Params;
  static constexpr size_t N = std::tuple_size_v<Params>;

public:
  Kernel(std::string name, F f, std::source_location loc,
         const std::vector<std::string> &param_names = {})
      : KernelBase(std::move(name), infos(std::make_index_sequence<N>()), loc),
        f_(std::move(f)) {
    if (!param_names.empty())
      name_parameters_at_definition(param_names);
  }

  Launch<F> operator[](Grid grid) { return Launch<F>(*this, grid, {}); }
  /// Every stage of the specialization these launch arguments select,
  /// compiled for `target`, as BLOCC_DUMP prints them:
  ///   add.asm_for(bl::Target::gpu("sm_90"), x, y, out, n,
  ///   1024)[bl::Stage::Ptx]
  /// Pointers may be null (only their 16-byte alignment matters).
  template <typename... A> Stages asm_for(const Target &target, A &&...args) {
    return inspect({detail::to_arg(std::forward<A>(args))...}, target);
  }
  /// The traced, optimized IR for these launch arguments, as text
  /// (Stage::Ir).
  template <typename... A> std::string ir_for(A &&...args) {
    return ir({detail::to_arg(std::forward<A>(args))...});
  }
  /// The CPU backend's optimized LLVM IR for these launch arguments
  /// (Stage::Llir of Target::cpu()).
  template <typename... A> std::string llvm_ir_for(A &&...args) {
    return inspect({detail::to_arg(std::forward<A>(args))...}, Target::cpu(),
                   {Stage::Llir})[Stage::Llir];
  }

protected:
  void invoke(const detail::TraceInputs &inputs) override {
    call(inputs, std::make_index_sequence<N>());
  }

private:
  template <size_t... I>
  static std::vector<detail::ParamInfo> infos(std::index_sequence<I...>) {
    return {detail::ParamTraits<std::tuple_element_t<I, Params>>::info()...};
  }
  template <size_t... I>
  void call(const detail::TraceInputs &inputs, std::index_sequence<I...>) {
    f_(detail::make_param<std::tuple_element_t<I, Params>>(inputs, I)...);
  }
  F f_;
};

/// Wraps a C++ callable as a kernel. Its parameters must have explicit
/// types: bl::Ptr<T>, scalar types (bl::i32, bl::f32, ...), bl::Const<T>.
template <typename F>
Kernel<F> kernel(std::string name, F f,
                 std::source_location loc = std::source_location::current()) {
  return Kernel<F>(std::move(name), std::move(f), loc);
}

/// The same, with the parameters' names, one per parameter, in order:
///   bl::kernel("add", {"x", "y", "out", "n", "BLOCK"}, [](...) { ... })
template <typename F, size_t M>
Kernel<F> kernel(std::string name, const char *const (&param_names)[M], F f,
                 std::source_location loc = std::source_location::current()) {
  static_assert(
      M == std::tuple_size_v<typename detail::Signature<F>::Params>,
      "blocc: bl::kernel's name list needs one name per kernel parameter");
  return Kernel<F>(std::move(name), std::move(f), loc,
                   std::vector<std::string>(param_names, param_names + M));
}

} // namespace blocc
