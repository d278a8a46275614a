// Where the interpreter is when something goes wrong: which kernel, which
// program instance, which operation. Every runtime error the interpreter
// raises goes through ExecutionSite::fail, so that each message names all
// three the same way:
//   kernel 'add', program (3, 0, 0), store at add.cpp:12: <what happened>
#pragma once

#include <cstdint>
#include <string>

namespace blocc::ir {
class Function;
class Operation;
} // namespace blocc::ir

namespace blocc::interp {

/// The coordinates of one program instance in the launch grid.
struct ProgramId {
  int64_t x = 0, y = 0, z = 0;
  int64_t operator[](int axis) const {
    return axis == 0 ? x : axis == 1 ? y : z;
  }
  /// "(x, y, z)"
  std::string str() const;
};

/// A failure local to one lane of an elementwise computation (integer
/// division by zero, an op undefined on an element type). The loop over
/// lanes catches it and reports it through ExecutionSite::fail with the
/// lane's index.
struct LaneError {
  std::string message;
};

struct ExecutionSite {
  const ir::Function *kernel = nullptr;
  ProgramId program;
  const ir::Operation *op = nullptr;

  /// "kernel 'add', program (3, 0, 0), store at add.cpp:12"
  std::string str() const;
  /// Throws blocc::Error with str() + ": " + what.
  [[noreturn]] void fail(const std::string &what) const;
};

/// "0x00007f...": addresses in messages, fixed width so that columns of
/// them line up.
std::string hex_address(uint64_t address);

} // namespace blocc::interp
