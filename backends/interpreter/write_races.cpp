#include "backends/interpreter/write_races.h"

#include "backends/interpreter/debug_ops.h"
#include "backends/interpreter/memory.h"
#include "backends/interpreter/runtime_value.h"
#include "ir/function.h"

namespace blocc::interp {

namespace {

/// "lane 5", or "lane 5 (index (1, 1))" in a block of rank 2 or more.
std::string describe_lane(int64_t lane, const ir::Operation &store) {
  const std::vector<int64_t> &shape = store.operand(0)->type().shape();
  std::string s = "lane " + std::to_string(lane);
  if (shape.size() > 1)
    s += " (index " + index_str(unflatten(lane, shape)) + ")";
  return s;
}

/// " (argument 2 'out', element offset 7 of 16)" for an address in a sized
/// argument buffer, else "".
std::string where(const Memory &memory, uint64_t address, int bytes) {
  int32_t argument = memory.provenance_of(address);
  if (argument == kNoProvenance)
    return "";
  const ArgumentBuffer &b = memory.buffer(argument);
  auto offset = static_cast<int64_t>(address - b.base);
  std::string position =
      offset % bytes == 0
          ? "element offset " + std::to_string(offset / bytes) + " of " +
                std::to_string(b.size_bytes / static_cast<size_t>(bytes))
          : "byte offset " + std::to_string(offset) + " of " +
                std::to_string(b.size_bytes);
  return " (" + b.describe() + ", " + position + ")";
}

} // namespace

void WriteRaces::record(const ExecutionSite &site, const Memory &memory,
                        int64_t lane, uint64_t address, int bytes,
                        ir::Scalar element, uint64_t value) {
  uint64_t raw =
      bytes >= 8 ? value : value & ((uint64_t{1} << (8 * bytes)) - 1);
  Store store{site.program, site.op, lane, bytes, raw, value, element};
  auto [it, inserted] = stores_.try_emplace(address, store);
  if (inserted)
    return;
  Store &earlier = it->second;
  const ProgramId &p = earlier.program;
  if (p.x == site.program.x && p.y == site.program.y && p.z == site.program.z) {
    earlier = store; // a program's later store replaces its earlier one
    return;
  }
  if (earlier.raw == raw && earlier.bytes == bytes)
    return; // the same value: benign
  site.fail("write race: " + describe_lane(lane, *site.op) + " writes " +
            format_element(value, element, false) + " to " +
            hex_address(address) + where(memory, address, bytes) +
            ", where program " + earlier.program.str() + " wrote " +
            format_element(earlier.value, earlier.element, false) + " (" +
            earlier.op->describe() + ", " +
            describe_lane(earlier.lane, *earlier.op) +
            ") in the same launch; programs that store to one address must "
            "store the same value (use an atomic, or a mask so that one "
            "program writes each element)");
}

} // namespace blocc::interp
