#include "backends/interpreter/interpreter.h"

#include "backends/interpreter/element.h"
#include "backends/interpreter/memory.h"
#include "backends/interpreter/program_executor.h"
#include "backends/interpreter/write_races.h"
#include "ir/error.h"

#include <bit>

namespace blocc::interp {

namespace {

std::string describe_argument(const ir::Function &f, size_t i) {
  std::string s = "argument " + std::to_string(i);
  const std::string &name = f.argument_info(i).name;
  if (!name.empty())
    s += " '" + name + "'";
  return s + " (" + f.argument(i)->type().str() + ")";
}

const char *kind_name(KernelArg::Kind kind) {
  switch (kind) {
  case KernelArg::Kind::Pointer:
    return "a pointer";
  case KernelArg::Kind::Int:
    return "an integer";
  case KernelArg::Kind::Float:
    return "a float";
  }
  return "?";
}

/// The runtime value an argument starts with.
RuntimeValue bind_argument(const ir::Function &f, size_t i,
                           const KernelArg &arg) {
  const ir::Type &type = f.argument(i)->type();
  auto mismatch = [&](const char *expected) {
    throw Error("kernel '" + f.name() + "': " + describe_argument(f, i) +
                " takes " + expected + ", got " + kind_name(arg.kind));
  };
  if (type.is_block())
    throw Error("kernel '" + f.name() + "': " + describe_argument(f, i) +
                ": block arguments are not supported");
  RuntimeValue v(type);
  ir::Scalar element = type.element();
  if (type.is_pointer()) {
    if (arg.kind != KernelArg::Kind::Pointer)
      mismatch("a pointer");
    v.bits[0] = reinterpret_cast<uint64_t>(arg.pointer);
    v.provenance[0] = static_cast<int32_t>(i);
  } else if (ir::is_integer(element)) {
    if (arg.kind != KernelArg::Kind::Int)
      mismatch("an integer");
    v.bits[0] =
        convert(static_cast<uint64_t>(arg.int_value), ir::Scalar::I64, element);
  } else {
    if (arg.kind != KernelArg::Kind::Float)
      mismatch("a float");
    v.bits[0] = from_double(arg.float_value, element);
  }
  return v;
}

} // namespace

void interpret(const ir::Function &f, Grid grid,
               const std::vector<KernelArg> &args,
               const InterpretOptions &options) {
  if (args.size() != f.num_arguments())
    throw Error("kernel '" + f.name() + "' takes " +
                std::to_string(f.num_arguments()) + " arguments, got " +
                std::to_string(args.size()));
  std::vector<RuntimeValue> arguments;
  for (size_t i = 0; i < args.size(); ++i)
    arguments.push_back(bind_argument(f, i, args[i]));
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] < 0)
      throw Error("kernel '" + f.name() + "': grid dimension " +
                  std::to_string(axis) + " is negative (" +
                  std::to_string(grid[axis]) + ")");
  Memory memory(f, args);
  WriteRaces races;
  WriteRaces *detect = options.detect_races ? &races : nullptr;
  for (int64_t z = 0; z < grid.z; ++z)
    for (int64_t y = 0; y < grid.y; ++y)
      for (int64_t x = 0; x < grid.x; ++x) {
        ProgramExecutor program(f, memory, ProgramId{x, y, z}, grid, options,
                                detect);
        program.run(arguments);
      }
}

} // namespace blocc::interp
