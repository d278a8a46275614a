// The reference interpreter: runs an ir::Function on host memory, element
// by element, one program instance after another. It is the oracle every
// backend is tested against, so it is written to be obviously correct, not
// fast. The semantics it gives each op are those of ir/opcode.h; where the
// IR leaves a choice open, README.md lists what the interpreter decided.
#pragma once

#include "ir/function.h"
#include "runtime/kernel_args.h"

#include <iosfwd>
#include <vector>

namespace blocc::interp {

struct InterpretOptions {
  /// Where the print op writes; nullptr means std::cout.
  std::ostream *print_stream = nullptr;
  /// Report a program storing a value different from what another program
  /// of the launch stored at the same address (write_races.h).
  bool detect_races = false;
};

/// Runs `f` for every program id of `grid` (x fastest, then y, then z),
/// serially. `args` bind to f's arguments in order: pointer arguments take
/// KernelArg::Kind::Pointer, integer arguments Kind::Int (truncated or
/// extended to the argument's type; i1 is `value != 0`), float arguments
/// Kind::Float (rounded to the argument's type).
///
/// Throws blocc::Error, naming the kernel, for arguments that do not match,
/// and, naming also the program id and the op with its source line, for
/// every runtime fault: an out-of-bounds or misaligned access (checked
/// before memory is touched), integer division by zero, a failed assert,
/// and with `detect_races` a write race (found when the second store runs,
/// before it writes).
/// Memory written by program instances before the fault stays written.
void interpret(const ir::Function &f, Grid grid,
               const std::vector<KernelArg> &args,
               const InterpretOptions &options = {});

} // namespace blocc::interp
