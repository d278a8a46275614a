// Runs one elementwise computation over host columns through the
// interpreter: builds `out[i] = body(in0[i], in1[i], ...)` as a masked
// kernel over blocks of 64 lanes, packs the inputs into buffers of their
// element type's storage width, poisons the output with 0xAB bytes, runs
// it, and unpacks the output. Columns hold raw bit patterns (zero-extended
// to 64 bits) so that every element type, fp8 included, goes through one
// path. Header-only, for tests.
#pragma once

#include "backends/interpreter/interpreter.h"
#include "backends/interpreter/testing/kernel_builder.h"

#include <cstring>
#include <functional>

namespace blocc::interp::testing {

struct Column {
  Scalar type;
  std::vector<uint64_t> raw;
};

inline int host_bytes(Scalar s) {
  int bits = ir::scalar_bits(s);
  return bits < 8 ? 1 : bits / 8;
}

inline std::vector<unsigned char> pack(const Column &c) {
  int bytes = host_bytes(c.type);
  std::vector<unsigned char> buffer(c.raw.size() * bytes);
  for (size_t i = 0; i < c.raw.size(); ++i)
    std::memcpy(buffer.data() + i * bytes, &c.raw[i], bytes); // little-endian
  return buffer;
}

using MapBody =
    std::function<Value *(KernelBuilder &, const std::vector<Value *> &)>;

inline std::vector<uint64_t> run_map(const std::vector<Column> &inputs,
                                     Scalar out_type, const MapBody &body,
                                     const std::string &name = "map") {
  constexpr int64_t kBlock = 64;
  const int64_t n = static_cast<int64_t>(inputs.at(0).raw.size());
  KernelBuilder k(name);
  std::vector<Value *> in_args;
  for (size_t i = 0; i < inputs.size(); ++i)
    in_args.push_back(k.ptr_arg(inputs[i].type, "in" + std::to_string(i)));
  Value *out = k.ptr_arg(out_type, "out");
  Value *count = k.arg(scalar_type(Scalar::I32), "n");
  Value *start =
      k.binary(OpCode::Mul, k.program_id(0), k.int_const(kBlock, Scalar::I32));
  Value *offsets =
      k.binary(OpCode::Add, k.splat(start, {kBlock}), k.arange(0, kBlock));
  Value *mask = k.cmp("lt", offsets, k.splat(count, {kBlock}));
  std::vector<Value *> values;
  // Masked-off lanes read 1, not 0, so that a division in the tail block
  // does not divide by zero in lanes nobody stores.
  for (size_t i = 0; i < in_args.size(); ++i)
    values.push_back(k.load(k.pointers(in_args[i], offsets), mask,
                            k.int_const(1, inputs[i].type, {kBlock})));
  Value *result = body(k, values);
  k.store(k.pointers(out, offsets), result, mask);
  const ir::Function &f = k.finish();

  std::vector<std::vector<unsigned char>> buffers;
  std::vector<KernelArg> args;
  for (const Column &c : inputs) {
    buffers.push_back(pack(c));
    args.push_back(
        KernelArg::of_pointer(buffers.back().data(), buffers.back().size()));
  }
  int bytes = host_bytes(out_type);
  std::vector<unsigned char> out_buffer(n * bytes, 0xAB);
  args.push_back(KernelArg::of_pointer(out_buffer.data(), out_buffer.size()));
  args.push_back(KernelArg::of_int(n));
  interpret(f, Grid((n + kBlock - 1) / kBlock), args);
  std::vector<uint64_t> raw(n, 0);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(&raw[i], out_buffer.data() + i * bytes, bytes);
  return raw;
}

/// Host values <-> raw columns.
template <typename T> std::vector<uint64_t> raw_of(const std::vector<T> &v) {
  std::vector<uint64_t> raw(v.size(), 0);
  for (size_t i = 0; i < v.size(); ++i)
    std::memcpy(&raw[i], &v[i], sizeof(T));
  return raw;
}
template <typename T> std::vector<T> typed(const std::vector<uint64_t> &raw) {
  std::vector<T> v(raw.size());
  for (size_t i = 0; i < raw.size(); ++i)
    std::memcpy(&v[i], &raw[i], sizeof(T));
  return v;
}

} // namespace blocc::interp::testing
