// Runs the body of a kernel for one program instance: keeps the value of
// every IR value defined so far, dispatches each op to the file that
// implements its family, and runs structured control flow (for, if) and the
// combine regions of reduce and scan.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/interpreter.h"
#include "backends/interpreter/runtime_value.h"

#include <unordered_map>
#include <vector>

namespace blocc::interp {

class Memory;
class WriteRaces;

class ProgramExecutor {
public:
  /// `races`: where stores are recorded for race detection (or null).
  ProgramExecutor(const ir::Function &kernel, const Memory &memory,
                  ProgramId program, Grid grid, const InterpretOptions &options,
                  WriteRaces *races = nullptr);

  /// Runs the body with its arguments bound to `arguments`.
  void run(std::vector<RuntimeValue> arguments);

private:
  /// Binds the block's arguments, runs its ops and returns the values its
  /// terminator hands back (none for a return).
  std::vector<RuntimeValue> run_block(const ir::Block &block,
                                      std::vector<RuntimeValue> arguments);
  void run_op(const ir::Operation &op);
  void run_for(const ExecutionSite &site,
               const std::vector<const RuntimeValue *> &operands);
  void run_if(const ExecutionSite &site,
              const std::vector<const RuntimeValue *> &operands);
  RuntimeValue constant(const ExecutionSite &site) const;
  RuntimeValue grid_query(const ExecutionSite &site) const;
  RuntimeValue arange(const ExecutionSite &site) const;

  const RuntimeValue &value_of(const ir::Value *v,
                               const ir::Operation &user) const;
  void define(const ir::Operation &op, std::vector<RuntimeValue> results);
  ExecutionSite site(const ir::Operation *op) const {
    return ExecutionSite{&kernel_, program_, op};
  }

  const ir::Function &kernel_;
  const Memory &memory_;
  ProgramId program_;
  Grid grid_;
  const InterpretOptions &options_;
  WriteRaces *races_;
  std::unordered_map<const ir::Value *, RuntimeValue> values_;
  bool returned_ = false; // a return ran: stop everything
};

} // namespace blocc::interp
