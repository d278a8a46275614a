#include "blocc/kernel.h"

#include "backends/interpreter/interpreter.h"
#include "blocc/trace.h"
#include "executor.h"
#include "gpu_launch.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "ir/written_arguments.h"
#include "stages.h"

#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace blocc::detail {

struct KernelBase::Compiled {
  Specialization specialization;
  std::vector<bool> written; // per parameter: does the kernel write through it
  mutable ExecutorCache executors;    // compiled code, reused by every launch
  mutable GpuKernelCache gpu_kernels; // the same for GPU launches
};

namespace {

/// A run-time integer parameter passed the value 1 (specialized as such).
bool is_unit_integer(const ParamInfo &p, const ArgValue &a) {
  return p.kind == ParamInfo::Kind::Scalar && ir::is_integer(p.dtype) &&
         p.dtype != int1 && a.kind == ArgValue::Kind::Int && a.int_value == 1;
}

bool fits(int64_t v, DType t) {
  switch (t) {
  case int1:
    return v == 0 || v == 1;
  case int8:
    return v >= INT8_MIN && v <= INT8_MAX;
  case int16:
    return v >= INT16_MIN && v <= INT16_MAX;
  case int32:
    return v >= INT32_MIN && v <= INT32_MAX;
  case uint8:
    return v >= 0 && v <= UINT8_MAX;
  case uint16:
    return v >= 0 && v <= UINT16_MAX;
  case uint32:
    return v >= 0 && v <= int64_t{UINT32_MAX};
  default:
    return true;
  }
}

/// Parameter names are keywords in Python and names in the IR: both read
/// C identifiers.
bool is_c_identifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

/// The shortest text that reads back as `v`: "5.5", not "5.500000".
std::string shortest_text(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

/// A constant's value as the specialization's description shows it.
std::string constant_text(const ParamInfo &param, const ArgValue &value) {
  if (value.kind == ArgValue::Kind::Float)
    return shortest_text(value.float_value);
  if (param.dtype == int1)
    return value.int_value ? "true" : "false";
  return std::to_string(value.int_value);
}

} // namespace

std::string argument_name(const std::string &kernel, size_t i,
                          const ParamInfo &p) {
  std::string named = p.name.empty() ? "" : " '" + p.name + "'";
  return "kernel '" + kernel + "', argument " + std::to_string(i + 1) + named +
         " (" + p.type_name + ")";
}

KernelBase::KernelBase(std::string name, std::vector<ParamInfo> params,
                       std::source_location loc)
    : name_(std::move(name)), params_(std::move(params)), loc_(loc) {}

KernelBase::~KernelBase() = default;

std::string KernelBase::definition_site() const { return where(loc_); }

void KernelBase::name_parameters(const std::vector<std::string> &names) {
  const std::string kernel =
      "kernel '" + name_ + "' (defined at " + where(loc_) + ")";
  if (names.size() != params_.size())
    throw Error(kernel + " has " + std::to_string(params_.size()) +
                " parameters, but " + std::to_string(names.size()) +
                " names were given for them");
  for (size_t i = 0; i < names.size(); ++i) {
    if (!is_c_identifier(names[i]))
      throw Error(kernel + ": the name '" + names[i] + "' of parameter " +
                  std::to_string(i + 1) +
                  " is not an identifier (letters, digits and _, not "
                  "starting with a digit)");
    for (size_t j = 0; j < i; ++j)
      if (names[j] == names[i])
        throw Error(kernel + ": parameters " + std::to_string(j + 1) + " and " +
                    std::to_string(i + 1) + " are both named '" + names[i] +
                    "'");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (has_parameter_names()) {
    for (size_t i = 0; i < names.size(); ++i)
      if (params_[i].name != names[i])
        throw Error(kernel + ": parameter " + std::to_string(i + 1) +
                    " is already named '" + params_[i].name + "', not '" +
                    names[i] + "'");
    return;
  }
  // The names reach the IR (its arguments), so specializations traced
  // before would print differently: name a kernel before launching it.
  if (!cache_.empty())
    throw Error(kernel + ": name its parameters before its first launch");
  for (size_t i = 0; i < names.size(); ++i)
    params_[i].name = names[i];
}

void KernelBase::name_parameters_at_definition(
    const std::vector<std::string> &names) {
  try {
    name_parameters(names);
  } catch (const Error &e) {
    definition_error_ = e.what();
  }
}

void KernelBase::check_arguments(const std::vector<ArgValue> &args) const {
  if (!definition_error_.empty())
    throw Error(definition_error_);
  if (args.size() != params_.size())
    throw Error("kernel '" + name_ + "' (defined at " + where(loc_) +
                ") takes " + std::to_string(params_.size()) +
                " arguments, but the launch passed " +
                std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &p = params_[i];
    const ArgValue &a = args[i];
    // Built only for a message: launches check arguments every time.
    auto who = [&] { return argument_name(name_, i, p); };
    switch (p.kind) {
    case ParamInfo::Kind::Pointer:
      if (a.kind != ArgValue::Kind::Pointer)
        throw Error(who() + ": expected a pointer to " +
                    std::string(ir::scalar_name(p.dtype)) +
                    " (T*, std::span<T>, std::vector<T>, "
                    "blocc::HostBuffer<T> or blocc::DeviceBuffer<T>), got " +
                    a.cpp_type);
      if (a.dtype != p.dtype)
        throw Error(who() + ": expected " +
                    std::string(ir::scalar_name(p.dtype)) + " elements, got " +
                    a.cpp_type + "; pass a buffer of " +
                    std::string(ir::scalar_name(p.dtype)) +
                    ", or declare the parameter bl::Ptr<" +
                    std::string(ir::scalar_name(a.dtype)) + ">");
      break;
    case ParamInfo::Kind::Scalar:
    case ParamInfo::Kind::Constant: {
      if (a.kind == ArgValue::Kind::Pointer)
        throw Error(who() + ": expected a " +
                    std::string(ir::scalar_name(p.dtype)) + " value, got " +
                    a.cpp_type);
      bool want_int = ir::is_integer(p.dtype);
      if (want_int && a.kind == ArgValue::Kind::Float)
        throw Error(who() + ": expected an integer, got the float " +
                    shortest_text(a.float_value));
      if (want_int && !fits(a.int_value, p.dtype))
        throw Error(who() + ": the value " + std::to_string(a.int_value) +
                    " does not fit in " +
                    std::string(ir::scalar_name(p.dtype)));
      break;
    }
    }
  }
}

std::unique_ptr<KernelBase::Compiled>
KernelBase::trace(const std::vector<ArgValue> &args) {
  auto compiled = std::make_unique<Compiled>();
  Specialization &specialization = compiled->specialization;
  specialization.kernel = name_;
  specialization.function = std::make_unique<ir::Function>(name_);
  ir::Function &fn = *specialization.function;
  TraceInputs inputs;
  inputs.arguments.resize(params_.size(), nullptr);
  inputs.constants = args;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamInfo &p = params_[i];
    const ArgValue &a = args[i];
    ir::ArgumentInfo info;
    info.name = p.name.empty() ? "arg" + std::to_string(i) : p.name;
    if (p.kind == ParamInfo::Kind::Pointer) {
      info.divisibility =
          reinterpret_cast<uintptr_t>(a.pointer) % 16 == 0 ? 16 : 1;
      inputs.arguments[i] = fn.add_argument(ir::Type::pointer(p.dtype), info);
    } else if (p.kind == ParamInfo::Kind::Scalar) {
      if (ir::is_integer(p.dtype) && a.kind == ArgValue::Kind::Int)
        info.divisibility = a.int_value % 16 == 0 ? 16 : 1;
      inputs.arguments[i] = fn.add_argument(ir::Type::scalar(p.dtype), info);
    } else {
      specialization.constants +=
          (specialization.constants.empty() ? "" : ", ") + info.name + "=" +
          constant_text(p, a);
    }
  }
  {
    TraceContext ctx(fn);
    // An integer argument equal to 1 (a unit stride, mostly) is traced as
    // the constant 1, as Triton specializes it: the products it scales
    // fold away, and the accesses it strides are seen contiguous (vector
    // loads, copies of whole tiles). The argument stays, unused.
    for (size_t i = 0; i < params_.size(); ++i)
      if (is_unit_integer(params_[i], args[i]))
        inputs.arguments[i] =
            ctx.builder().int_constant(1, ir::Type::scalar(params_[i].dtype));
    invoke(inputs);
    if (!ctx.deferred_error().empty())
      throw Error(ctx.deferred_error());
    ctx.builder().set_insertion_point_to_end(&fn.body());
    ctx.builder().set_location({});
    ctx.builder().create(ir::OpCode::Return, {}, {});
  }
  specialization.traced = ir::print(fn);
  ir::run_default_pipeline(fn);
  specialization.ir = ir::print(fn);
  compiled->written =
      ir::arguments_written(fn, params_.size(), inputs.arguments);
  return compiled;
}

const KernelBase::Compiled &
KernelBase::compile(const std::vector<ArgValue> &args) {
  check_arguments(args);
  return find_or_trace(args);
}

size_t KernelBase::KeyHash::operator()(
    const std::vector<uint64_t> &words) const noexcept {
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a over the words
  for (uint64_t word : words)
    hash = (hash ^ word) * 0x100000001b3ull;
  return static_cast<size_t>(hash);
}

const KernelBase::Compiled &
KernelBase::find_or_trace(const std::vector<ArgValue> &args) {
  // The specialization key: what tracing may depend on, a word per
  // argument (two per constant: its kind and its bits). Built in a buffer
  // each thread keeps, so that a relaunch allocates nothing for it.
  thread_local std::vector<uint64_t> key;
  key.clear();
  for (size_t i = 0; i < params_.size(); ++i) {
    const ArgValue &a = args[i];
    switch (params_[i].kind) {
    case ParamInfo::Kind::Pointer:
      key.push_back(reinterpret_cast<uintptr_t>(a.pointer) % 16 == 0 ? 16 : 1);
      break;
    case ParamInfo::Kind::Scalar:
      // 0: the unit integer, traced as the constant 1.
      key.push_back(is_unit_integer(params_[i], a) ? 0
                    : a.kind == ArgValue::Kind::Int && a.int_value % 16 == 0
                        ? 16
                        : 1);
      break;
    case ParamInfo::Kind::Constant:
      // Floats by their bits: two constants that print alike may differ.
      key.push_back(a.kind == ArgValue::Kind::Float);
      key.push_back(a.kind == ArgValue::Kind::Float
                        ? std::bit_cast<uint64_t>(a.float_value)
                        : static_cast<uint64_t>(a.int_value));
      break;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(key);
  if (it != cache_.end())
    return *it->second;
  // A copy: tracing may launch on this thread, reusing the buffer.
  std::vector<uint64_t> new_key = key;
  std::unique_ptr<Compiled> traced = trace(args);
  return *cache_.emplace(std::move(new_key), std::move(traced)).first->second;
}

const ir::Function &KernelBase::specialize(const std::vector<ArgValue> &args) {
  return *compile(args).specialization.function;
}

std::string KernelBase::ir(const std::vector<ArgValue> &args) {
  return compile(args).specialization.ir;
}

Stages KernelBase::inspect(const std::vector<ArgValue> &args,
                           const Target &target,
                           const std::vector<Stage> &stages) {
  StageSet wanted = stages_of(target);
  if (!stages.empty()) {
    wanted = 0;
    for (Stage s : stages) {
      if (!(stages_of(target) & stage_bit(s))) {
        std::string names;
        for (Stage t : target.stages())
          names += std::string(names.empty() ? "" : ", ") + stage_name(t);
        throw Error("kernel '" + name_ + "': '" + stage_name(s) +
                    "' is not a stage of target " + target.str() +
                    "; its stages are " + names);
      }
      wanted |= stage_bit(s);
    }
  }
  return compile_stages(compile(args).specialization, target, wanted);
}

size_t KernelBase::num_specializations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

void KernelBase::launch(const Grid &grid, const std::vector<ArgValue> &args,
                        const LaunchOptions &options, Caller caller) {
  // Mistakes in the launch itself name the launch's line (a program may
  // launch one kernel from several places); trace errors name the op's.
  // Made only for a message: the launch's line, as errors start.
  auto site = [&] {
    return grid.loc.line() ? where(grid.loc) + ": error: " : std::string();
  };
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] < 0)
      throw Error(site() + "kernel '" + name_ + "': grid dimension " +
                  std::to_string(axis) + " is negative (" +
                  std::to_string(grid[axis]) + ")");
  if (options.num_warps <= 0 || (options.num_warps & (options.num_warps - 1)))
    throw Error(site() + "kernel '" + name_ +
                "': num_warps must be a power of two, got " +
                std::to_string(options.num_warps));
  try {
    check_arguments(args);
  } catch (const Error &e) {
    throw Error(site() + e.what());
  }
  const Compiled &compiled = find_or_trace(args);
  std::vector<KernelArg> runtime_args;
  runtime_args.reserve(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const ArgValue &a = args[i];
    const ParamInfo &p = params_[i];
    if (p.kind == ParamInfo::Kind::Constant)
      continue;
    if (p.kind == ParamInfo::Kind::Pointer) {
      if (a.read_only && compiled.written[i])
        throw Error(
            site() + argument_name(name_, i, p) + ": " + a.cpp_type +
            " is read-only, but the kernel writes through it; pass a " +
            (caller == Caller::Python ? "writable array" : "mutable buffer"));
      runtime_args.push_back(KernelArg::of_pointer(a.pointer, a.size_bytes));
    } else if (ir::is_integer(p.dtype)) {
      runtime_args.push_back(KernelArg::of_int(a.int_value));
    } else {
      runtime_args.push_back(KernelArg::of_float(
          a.kind == ArgValue::Kind::Float ? a.float_value
                                          : static_cast<double>(a.int_value)));
    }
  }
  if (grid.count() == 0)
    return;
  if (launch_on_gpu(name_, params_, args, compiled.written,
                    compiled.specialization, grid, runtime_args, options,
                    caller, compiled.gpu_kernels))
    return;
  execute(compiled.specialization, grid, runtime_args, options.backend,
          options.check, &compiled.executors);
}

} // namespace blocc::detail
