// The runtime hooks of checked kernels (lower_checks.cpp): the message of
// an access that failed its bounds checks, worded exactly as the
// interpreter words it (backends/interpreter/memory.cpp), and the store
// records of write-race detection.
#include "backends/cpu/kernel_info.h"
#include "backends/cpu/runtime_hooks.h"

#include <cstdio>
#include <cstring>

namespace blocc::cpu {

namespace {

using runtime::cpu::BufferBounds;
using runtime::cpu::ProgramState;
using runtime::cpu::StoreRecord;

const KernelInfo &info_of(const ProgramState *state) {
  // ProgramState::kernel points at the ProgramSites base (cpu_backend.cpp).
  return static_cast<const KernelInfo &>(runtime::cpu::sites_of(state));
}

const LaunchChecks &launch_of(const ProgramState *state) {
  return *static_cast<const LaunchChecks *>(state->launch);
}

std::string hex_address(uint64_t address) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%016llx",
                static_cast<unsigned long long>(address));
  return buffer;
}

const char *op_word(AccessSite::Kind kind) {
  switch (kind) {
  case AccessSite::Kind::Load:
    return "load";
  case AccessSite::Kind::Store:
    return "store";
  case AccessSite::Kind::Atomic:
    return "atomic";
  }
  return "access";
}

const char *verb(AccessSite::Kind kind) {
  switch (kind) {
  case AccessSite::Kind::Load:
    return "reads";
  case AccessSite::Kind::Store:
    return "writes";
  case AccessSite::Kind::Atomic:
    return "updates";
  }
  return "accesses";
}

/// "argument 2 'arg2'".
std::string describe_argument(const KernelInfo &info, int argument) {
  std::string s = "argument " + std::to_string(argument);
  const std::string &name =
      info.argument_names.at(static_cast<size_t>(argument));
  if (!name.empty())
    s += " '" + name + "'";
  return s;
}

/// "argument 2 'arg2' [0x..., 0x...) of 400 bytes".
std::string describe_buffer(const KernelInfo &info, const LaunchChecks &launch,
                            int argument) {
  const BufferBounds &b = launch.bounds.at(static_cast<size_t>(argument));
  return describe_argument(info, argument) + " [" + hex_address(b.begin) +
         ", " + hex_address(b.begin + b.size) + ") of " +
         std::to_string(b.size) + " bytes";
}

/// "element offset 12 of 12", or in bytes where the offset is not a
/// multiple of the element size.
std::string position_in(const BufferBounds &b, uint64_t address, int bytes) {
  auto offset = static_cast<int64_t>(address - b.begin);
  if (offset % bytes == 0)
    return "element offset " + std::to_string(offset / bytes) + " of " +
           std::to_string(b.size / static_cast<uint64_t>(bytes));
  return "byte offset " + std::to_string(offset) + " of " +
         std::to_string(b.size);
}

bool sized(const LaunchChecks &launch, int argument) {
  return !launch.bounds.at(static_cast<size_t>(argument)).is_unknown_extent();
}

/// The sized pointer argument whose buffer holds `address`, or -1.
int buffer_holding(const KernelInfo &info, const LaunchChecks &launch,
                   uint64_t address, const std::vector<int> &among) {
  for (int a : among)
    if (info.pointer_arguments.at(static_cast<size_t>(a)) && sized(launch, a) &&
        launch.bounds[static_cast<size_t>(a)].holds(address, 1))
      return a;
  return -1;
}

std::vector<int> pointer_arguments(const KernelInfo &info) {
  std::vector<int> all;
  for (size_t i = 0; i < info.pointer_arguments.size(); ++i)
    if (info.pointer_arguments[i])
      all.push_back(static_cast<int>(i));
  return all;
}

/// What is wrong with the access of `lane` at `address`, in the
/// interpreter's words (its checks in its order: bounds of the buffer the
/// pointer derives from, no buffer at all, the null page, alignment).
std::string access_problem(const KernelInfo &info, const LaunchChecks &launch,
                           const AccessSite &site, int64_t lane,
                           uint64_t address) {
  auto what = [&](const char *problem) {
    return std::string(problem) + " " + op_word(site.kind) + ": " +
           describe_lane(lane, site.shape) + " " + verb(site.kind) + " " +
           std::to_string(site.bytes) + (site.bytes == 1 ? " byte" : " bytes") +
           " at " + hex_address(address);
  };
  auto bytes = static_cast<uint64_t>(site.bytes);
  auto out_of_bounds = [&](int argument) {
    const BufferBounds &b = launch.bounds[static_cast<size_t>(argument)];
    return what("out-of-bounds") + ", outside " +
           describe_buffer(info, launch, argument) + " (" +
           position_in(b, address, site.bytes) + ")";
  };
  if (!site.by_address && site.arguments.size() == 1) {
    int argument = site.arguments[0];
    if (sized(launch, argument) &&
        !launch.bounds[static_cast<size_t>(argument)].holds(address, bytes))
      return out_of_bounds(argument);
  } else if (site.by_address) {
    // As the interpreter gives a pointer made from an integer the
    // provenance of the buffer its address falls in.
    std::vector<int> all = pointer_arguments(info);
    int argument = buffer_holding(info, launch, address, all);
    if (argument >= 0) {
      if (!launch.bounds[static_cast<size_t>(argument)].holds(address, bytes))
        return out_of_bounds(argument);
    } else {
      bool any_unsized = false;
      for (int a : all)
        any_unsized |= !sized(launch, a);
      if (!any_unsized)
        return what("invalid") +
               ", which derives from no pointer argument (it was made by "
               "int_to_ptr) and lies in no argument's buffer";
    }
  } else {
    // The pointer derives from one of several arguments (a select or a
    // loop merges them), which one is not known per lane.
    bool held = false, all_sized = true;
    for (int a : site.arguments) {
      held |= launch.bounds[static_cast<size_t>(a)].holds(address, bytes);
      all_sized &= sized(launch, a);
    }
    if (!held && all_sized) {
      std::string buffers;
      for (size_t i = 0; i < site.arguments.size(); ++i)
        buffers += (i == 0                           ? ""
                    : i + 1 == site.arguments.size() ? " and "
                                                     : ", ") +
                   describe_buffer(info, launch, site.arguments[i]);
      return what("out-of-bounds") +
             ", outside every buffer the pointer may derive from: " + buffers;
    }
  }
  if (address < BufferBounds::kNullPageEnd)
    return what("null pointer");
  if (address % bytes != 0)
    return what("misaligned") +
           ", which is not a multiple of the element size (" +
           std::to_string(site.bytes) + ")";
  return what("invalid") + ", at the end of the address space";
}

/// "(1, 0, 0)" for a linear program index of `state`'s grid.
std::string program_of(const ProgramState *state, int64_t linear) {
  int64_t x = linear % state->grid[0];
  int64_t y = (linear / state->grid[0]) % state->grid[1];
  int64_t z = linear / (state->grid[0] * state->grid[1]);
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " +
         std::to_string(z) + ")";
}

std::string value_text(const AccessSite &site, uint64_t bits) {
  unsigned char bytes[8];
  std::memcpy(bytes, &bits, sizeof bytes); // little endian
  return format_element(bytes, site.element, false);
}

/// The message of a store that races with an earlier one of another
/// program: worded as the interpreter words it.
std::string race_message(const ProgramState *state, const AccessSite &site,
                         const StoreRecord &now, uint64_t address,
                         const StoreRecord &earlier) {
  const KernelInfo &info = info_of(state);
  const LaunchChecks &launch = launch_of(state);
  const AccessSite &before =
      info.accesses.at(static_cast<size_t>(earlier.site));
  std::string where;
  int argument = buffer_holding(info, launch, address, pointer_arguments(info));
  if (argument >= 0)
    where = " (" + describe_argument(info, argument) + ", " +
            position_in(launch.bounds[static_cast<size_t>(argument)], address,
                        site.bytes) +
            ")";
  return program_str(state) + ", " + site.op +
         ": write race: " + describe_lane(now.lane, site.shape) + " writes " +
         value_text(site, now.bits) + " to " + hex_address(address) + where +
         ", where program " + program_of(state, earlier.program) + " wrote " +
         value_text(before, earlier.bits) + " (" + before.op + ", " +
         describe_lane(earlier.lane, before.shape) +
         ") in the same launch; programs that store to one address must "
         "store the same value (use an atomic, or a mask so that one program "
         "writes each element)";
}

} // namespace

} // namespace blocc::cpu

extern "C" void blocc_cpu_access_fault(blocc::runtime::cpu::ProgramState *state,
                                       int32_t site, int64_t lane,
                                       uint64_t address) {
  using namespace blocc::cpu;
  try {
    const KernelInfo &info = info_of(state);
    const AccessSite &access = info.accesses.at(static_cast<size_t>(site));
    state->error =
        program_str(state) + ", " + access.op + ": " +
        access_problem(info, launch_of(state), access, lane, address);
  } catch (...) {
    state->error = "blocc: internal error while reporting a kernel fault";
  }
}

extern "C" int32_t
blocc_cpu_record_stores(blocc::runtime::cpu::ProgramState *state, int32_t site,
                        int32_t count, const uint64_t *addresses,
                        const uint64_t *bits, const uint8_t *active,
                        const int32_t *lanes) {
  using namespace blocc::cpu;
  try {
    const AccessSite &access =
        info_of(state).accesses.at(static_cast<size_t>(site));
    blocc::runtime::cpu::WriteRaceDetector &races = *launch_of(state).races;
    int64_t program = state->program[0] +
                      state->grid[0] * (state->program[1] +
                                        state->grid[1] * state->program[2]);
    auto race = races.record(program, site, access.bytes, count, addresses,
                             bits, active, lanes);
    if (!race)
      return 0;
    blocc::runtime::cpu::StoreRecord store{
        program, bits[race->index], access.bytes, site, lanes[race->index]};
    state->error =
        race_message(state, access, store, race->address, race->earlier);
    return 1;
  } catch (...) {
    state->error = "blocc: internal error while recording a kernel's stores";
    return 1;
  }
}
