#include "backends/interpreter/memory.h"

#include "backends/interpreter/runtime_value.h"
#include "ir/error.h"
#include "ir/function.h"

#include <cstring>

namespace blocc::interp {

namespace {

constexpr uint64_t kNullPageEnd = 4096;

const char *op_word(AccessKind kind) {
  switch (kind) {
  case AccessKind::Load:
    return "load";
  case AccessKind::Store:
    return "store";
  case AccessKind::Atomic:
    return "atomic";
  }
  return "access";
}

const char *verb(AccessKind kind) {
  switch (kind) {
  case AccessKind::Load:
    return "reads";
  case AccessKind::Store:
    return "writes";
  case AccessKind::Atomic:
    return "updates";
  }
  return "accesses";
}

} // namespace

std::string ArgumentBuffer::describe() const {
  std::string s = "argument " + std::to_string(argument);
  if (!name.empty())
    s += " '" + name + "'";
  return s;
}

Memory::Memory(const ir::Function &kernel, const std::vector<KernelArg> &args) {
  buffers_.resize(kernel.num_arguments());
  is_pointer_.assign(kernel.num_arguments(), false);
  for (size_t i = 0; i < kernel.num_arguments() && i < args.size(); ++i) {
    if (!kernel.argument(i)->type().is_pointer())
      continue;
    ArgumentBuffer &b = buffers_[i];
    b.argument = static_cast<int>(i);
    b.name = kernel.argument_info(i).name;
    b.base = reinterpret_cast<uint64_t>(args[i].pointer);
    b.size_bytes = args[i].size_bytes;
    is_pointer_[i] = true;
    if (!b.sized())
      any_unsized_ = true;
  }
}

const ArgumentBuffer &Memory::buffer(int32_t argument) const {
  return buffers_.at(static_cast<size_t>(argument));
}

int32_t Memory::provenance_of(uint64_t address) const {
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const ArgumentBuffer &b = buffers_[i];
    if (is_pointer_[i] && b.sized() && address >= b.base &&
        address - b.base < b.size_bytes)
      return static_cast<int32_t>(i);
  }
  return kNoProvenance;
}

void Memory::check(const ExecutionSite &site, AccessKind kind, int64_t lane,
                   const std::vector<int64_t> &shape, uint64_t address,
                   int32_t provenance, int bytes) const {
  // "lane 9 (index (1, 1)) reads 4 bytes at 0x..."
  auto what = [&](const char *problem) {
    std::string s = std::string(problem) + " " + op_word(kind) + ": lane " +
                    std::to_string(lane);
    if (shape.size() > 1)
      s += " (index " + index_str(unflatten(lane, shape)) + ")";
    return s + " " + verb(kind) + " " + std::to_string(bytes) +
           (bytes == 1 ? " byte" : " bytes") + " at " + hex_address(address);
  };
  if (provenance != kNoProvenance) {
    const ArgumentBuffer &b = buffer(provenance);
    // In bounds when [address, address + bytes) lies in [base, base + size),
    // written so that no sum can wrap around for far-away addresses.
    if (b.sized() &&
        !(address >= b.base && b.size_bytes >= static_cast<size_t>(bytes) &&
          address - b.base <= b.size_bytes - bytes)) {
      int64_t offset = static_cast<int64_t>(address - b.base);
      std::string position = offset % bytes == 0
                                 ? "element offset " +
                                       std::to_string(offset / bytes) + " of " +
                                       std::to_string(b.size_bytes / bytes)
                                 : "byte offset " + std::to_string(offset) +
                                       " of " + std::to_string(b.size_bytes);
      site.fail(what("out-of-bounds") + ", outside " + b.describe() + " [" +
                hex_address(b.base) + ", " +
                hex_address(b.base + b.size_bytes) + ") of " +
                std::to_string(b.size_bytes) + " bytes (" + position + ")");
    }
  } else if (!any_unsized_) {
    site.fail(what("invalid") +
              ", which derives from no pointer argument (it "
              "was made by int_to_ptr) and lies in no argument's buffer");
  }
  if (address < kNullPageEnd)
    site.fail(what("null pointer"));
  if (address % static_cast<uint64_t>(bytes) != 0)
    site.fail(what("misaligned") +
              ", which is not a multiple of the element size (" +
              std::to_string(bytes) + ")");
}

uint64_t Memory::read(uint64_t address, int bytes) {
  const void *p = reinterpret_cast<const void *>(address);
  switch (bytes) {
  case 1: {
    uint8_t v;
    std::memcpy(&v, p, 1);
    return v;
  }
  case 2: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case 8: {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
  throw Error("internal: memory access of " + std::to_string(bytes) + " bytes");
}

void Memory::write(uint64_t address, int bytes, uint64_t raw) {
  void *p = reinterpret_cast<void *>(address);
  switch (bytes) {
  case 1: {
    auto v = static_cast<uint8_t>(raw);
    std::memcpy(p, &v, 1);
    return;
  }
  case 2: {
    auto v = static_cast<uint16_t>(raw);
    std::memcpy(p, &v, 2);
    return;
  }
  case 4: {
    auto v = static_cast<uint32_t>(raw);
    std::memcpy(p, &v, 4);
    return;
  }
  case 8:
    std::memcpy(p, &raw, 8);
    return;
  }
  throw Error("internal: memory access of " + std::to_string(bytes) + " bytes");
}

} // namespace blocc::interp
