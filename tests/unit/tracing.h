// Kernel bodies traced straight into IR functions, for the unit tests of
// what tracing builds (no bl::kernel, no specialization): the arguments
// are the function's, of the types given.
#pragma once

#include "blocc/blocc.h"
#include "blocc/trace.h"
#include "ir/passes.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace blocc::unit_testing {

using Args = std::vector<ir::Value *>;

/// Traces `body` over arguments of `types`, each known to be a multiple
/// of `divisibility`, into a verified function named "k".
inline std::unique_ptr<ir::Function>
trace(const std::vector<ir::Type> &types,
      const std::function<void(const Args &)> &body,
      int64_t divisibility = 16) {
  auto fn = std::make_unique<ir::Function>("k");
  Args args;
  for (size_t i = 0; i < types.size(); ++i)
    args.push_back(
        fn->add_argument(types[i], {"a" + std::to_string(i), divisibility}));
  {
    detail::TraceContext ctx(*fn);
    body(args);
    ctx.builder().create(ir::OpCode::Return, {}, {});
  }
  ir::verify(*fn);
  return fn;
}

/// The message of the blocc::Error `body` throws while traced over
/// arguments of `types` ("" if none).
inline std::string trace_error(const std::vector<ir::Type> &types,
                               const std::function<void(const Args &)> &body) {
  ir::Function fn("k");
  Args args;
  for (const ir::Type &t : types)
    args.push_back(fn.add_argument(t));
  detail::TraceContext ctx(fn);
  try {
    body(args);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

inline ir::Type scalar(ir::Scalar s) { return ir::Type::scalar(s); }
inline ir::Type pointer(ir::Scalar s) { return ir::Type::pointer(s); }

/// How many ops of `fn` (nested ones included) have opcode `code`.
inline int count_ops(const ir::Function &fn, ir::OpCode code) {
  int n = 0;
  fn.walk([&](const ir::Operation &op) { n += op.code() == code; });
  return n;
}

/// The first op of `fn` in program order with opcode `code`; nullptr if
/// none has it.
inline ir::Operation *find_op(ir::Function &fn, ir::OpCode code) {
  ir::Operation *found = nullptr;
  fn.walk([&](ir::Operation &op) {
    if (!found && op.code() == code)
      found = &op;
  });
  return found;
}

/// A kernel argument pointing at `v`'s elements.
template <typename T> KernelArg buffer(std::vector<T> &v) {
  return KernelArg::of_pointer(v.data(), v.size() * sizeof(T));
}

} // namespace blocc::unit_testing
