// Memory in the reference interpreter: masks and `other`, every bounds
// error with its message, pointer provenance, alignment, and atomics.
#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/interpreter.h"
#include "backends/interpreter/testing/kernel_builder.h"
#include "ir/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>

namespace blocc::interp {
namespace {

using namespace testing;

template <typename T> KernelArg buffer_arg(std::vector<T> &v) {
  return KernelArg::of_pointer(v.data(), v.size() * sizeof(T));
}

std::string hex(const void *p) {
  return hex_address(reinterpret_cast<uint64_t>(p));
}

/// Runs f, which must throw blocc::Error, and returns the message.
std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected blocc::Error";
  return "";
}

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "missing '" << (part) << "' in: " << (text)

/// out[offsets] = in[offsets * scale + shift] for 8 lanes, offsets the
/// block's lanes, with optional mask lanes < limit.
struct CopyKernel {
  KernelBuilder k{"copy"};
  const ir::Function *f = nullptr;
  CopyKernel(bool masked, int load_line = 10, int store_line = 11) {
    Value *in = k.ptr_arg(Scalar::F32, "in");
    Value *out = k.ptr_arg(Scalar::F32, "out");
    Value *shift = k.arg(scalar_type(Scalar::I32), "shift");
    Value *limit = k.arg(scalar_type(Scalar::I32), "limit");
    Value *lanes = k.arange(0, 8);
    Value *mask = masked ? k.cmp("lt", lanes, k.splat(limit, {8})) : nullptr;
    Value *source = k.binary(OpCode::Add, lanes, k.splat(shift, {8}));
    k.at_line(load_line);
    Value *v = k.load(k.pointers(in, source), mask,
                      mask ? k.float_const(-5, Scalar::F32, {8}) : nullptr);
    k.at_line(store_line);
    k.store(k.pointers(out, lanes), v, mask);
    f = &k.finish();
  }
};

TEST(InterpreterMemory, MaskedLanesReadOtherAndTouchNothing) {
  CopyKernel copy(/*masked=*/true);
  std::vector<float> in{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> out(8, std::numeric_limits<float>::quiet_NaN());
  // shift 1000 would be far out of bounds, but no lane is active.
  interpret(*copy.f, Grid(1),
            {buffer_arg(in), buffer_arg(out), KernelArg::of_int(1000),
             KernelArg::of_int(0)});
  for (float v : out)
    EXPECT_TRUE(std::isnan(v));
  // Lanes 0..4 active, reading in[3..7]; lanes 5..7 masked: not stored.
  interpret(*copy.f, Grid(1),
            {buffer_arg(in), buffer_arg(out), KernelArg::of_int(3),
             KernelArg::of_int(5)});
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(out[i], in[i + 3]);
  for (int i = 5; i < 8; ++i)
    EXPECT_TRUE(std::isnan(out[i]));
}

TEST(InterpreterMemory, LoadWithoutOtherGivesZeroInMaskedLanes) {
  KernelBuilder k("zeros");
  Value *in = k.ptr_arg(Scalar::I16, "in");
  Value *out = k.ptr_arg(Scalar::I16, "out");
  Value *lanes = k.arange(0, 4);
  Value *mask = k.cmp("lt", lanes, k.int_const(2, Scalar::I32, {4}));
  k.store(k.pointers(out, lanes), k.load(k.pointers(in, lanes), mask));
  const ir::Function &f = k.finish();
  std::vector<int16_t> src{7, 8}, dst(4, -1);
  interpret(f, Grid(1), {buffer_arg(src), buffer_arg(dst)});
  EXPECT_EQ(dst, (std::vector<int16_t>{7, 8, 0, 0}));
}

TEST(InterpreterMemory,
     OutOfBoundsLoadNamesKernelOpProgramLaneAddressAndBuffer) {
  KernelBuilder k("gather2d");
  Value *in = k.ptr_arg(Scalar::F32, "in");
  Value *out = k.ptr_arg(Scalar::F32, "out");
  // offsets[i][j] = 4 * i + j + pid_y * 8 over a 2x4 block.
  Value *rows = k.broadcast(k.expand_dims(k.arange(0, 2), 1), {2, 4});
  Value *cols = k.broadcast(k.expand_dims(k.arange(0, 4), 0), {2, 4});
  Value *offsets = k.binary(
      OpCode::Add,
      k.binary(OpCode::Add,
               k.binary(OpCode::Mul, rows, k.int_const(4, Scalar::I32, {2, 4})),
               cols),
      k.splat(
          k.binary(OpCode::Mul, k.program_id(1), k.int_const(3, Scalar::I32)),
          {2, 4}));
  k.at_line(42);
  Value *v = k.load(k.pointers(in, offsets));
  k.store(k.pointers(out, offsets), v);
  const ir::Function &f = k.finish();
  std::vector<float> src(8, 1.0f), dst(16, 0.0f);
  std::string m = error_of([&] {
    interpret(f, Grid(1, 2), {buffer_arg(src), buffer_arg(dst)});
  });
  EXPECT_CONTAINS(m, "kernel 'gather2d'");
  EXPECT_CONTAINS(m, "program (0, 1, 0)");
  EXPECT_CONTAINS(m, "load at kernel_test.cpp:42");
  // Program y = 1 reads 3..10: lane 5 (index (1, 1)) is element 8.
  EXPECT_CONTAINS(
      m, "out-of-bounds load: lane 5 (index (1, 1)) reads 4 bytes at " +
             hex(src.data() + 8));
  EXPECT_CONTAINS(m, "outside argument 0 'in' [" + hex(src.data()) + ", " +
                         hex(src.data() + 8) +
                         ") of 32 bytes (element offset 8 of 8)");
}

TEST(InterpreterMemory, OutOfBoundsStoreWritesNoLaneAtAll) {
  CopyKernel copy(/*masked=*/false, 10, 11);
  std::vector<float> in(16);
  std::iota(in.begin(), in.end(), 1.0f);
  // out holds 12 floats but the kernel is told 6: lanes 6 and 7 are out.
  std::vector<float> out(12, -1.0f);
  std::string m = error_of([&] {
    interpret(*copy.f, Grid(1),
              {buffer_arg(in), KernelArg::of_pointer(out.data(), 24),
               KernelArg::of_int(0), KernelArg::of_int(8)});
  });
  EXPECT_CONTAINS(
      m, "kernel 'copy', program (0, 0, 0), store at kernel_test.cpp:11: "
         "out-of-bounds store: lane 6 writes 4 bytes at " +
             hex(out.data() + 6));
  EXPECT_CONTAINS(m, "argument 1 'out' [" + hex(out.data()) + ", " +
                         hex(out.data() + 6) +
                         ") of 24 bytes (element offset 6 of 6)");
  for (float v : out)
    EXPECT_EQ(v, -1.0f); // not even the six in-bounds lanes
}

TEST(InterpreterMemory, AccessBeforeTheBufferIsOutOfBounds) {
  CopyKernel copy(/*masked=*/true, 20, 21);
  std::vector<float> in(8, 1.0f), out(8, 0.0f);
  std::string m = error_of([&] {
    interpret(*copy.f, Grid(1),
              {buffer_arg(in), buffer_arg(out), KernelArg::of_int(-2),
               KernelArg::of_int(8)});
  });
  EXPECT_CONTAINS(m, "load at kernel_test.cpp:20: out-of-bounds load: lane 0 "
                     "reads 4 bytes at " +
                         hex(in.data() - 2));
  EXPECT_CONTAINS(m, "(element offset -2 of 8)");
}

TEST(InterpreterMemory, ProvenanceKeepsAPointerInsideItsOwnArgument) {
  // Two arguments carved out of one allocation: walking off the end of the
  // first into the second is still out of bounds for the first.
  CopyKernel copy(/*masked=*/false);
  std::vector<float> both(16, 2.0f), out(8);
  std::string m = error_of([&] {
    interpret(*copy.f, Grid(1),
              {KernelArg::of_pointer(both.data(), 16),
               KernelArg::of_pointer(both.data() + 4, 48), KernelArg::of_int(0),
               KernelArg::of_int(8)});
  });
  EXPECT_CONTAINS(m, "out-of-bounds load: lane 4");
  EXPECT_CONTAINS(m, "argument 0 'in'");
}

TEST(InterpreterMemory, RawPointersAreTrustedButNullAndMisalignmentAreNot) {
  CopyKernel copy(/*masked=*/false, 30, 31);
  std::vector<float> in(8, 3.0f), out(8, 0.0f);
  // Unknown sizes: no bounds to check, the access is trusted.
  interpret(*copy.f, Grid(1),
            {KernelArg::of_pointer(in.data()),
             KernelArg::of_pointer(out.data()), KernelArg::of_int(0),
             KernelArg::of_int(8)});
  EXPECT_EQ(out, in);
  std::string m = error_of([&] {
    interpret(*copy.f, Grid(1),
              {KernelArg::of_pointer(nullptr),
               KernelArg::of_pointer(out.data()), KernelArg::of_int(0),
               KernelArg::of_int(8)});
  });
  EXPECT_CONTAINS(
      m,
      "load at kernel_test.cpp:30: null pointer load: lane 0 reads 4 bytes at "
      "0x0000000000000000");
  auto *odd = reinterpret_cast<char *>(in.data()) + 2;
  m = error_of([&] {
    interpret(*copy.f, Grid(1),
              {KernelArg::of_pointer(odd, 28),
               KernelArg::of_pointer(out.data()), KernelArg::of_int(0),
               KernelArg::of_int(4)});
  });
  EXPECT_CONTAINS(m, "misaligned load: lane 0 reads 4 bytes at " + hex(odd) +
                         ", which is not a multiple of the element size (4)");
  m = error_of([&] {
    interpret(*copy.f, Grid(1),
              {KernelArg::of_pointer(odd), KernelArg::of_pointer(out.data()),
               KernelArg::of_int(0), KernelArg::of_int(4)});
  });
  EXPECT_CONTAINS(m, "misaligned load");
}

TEST(InterpreterMemory, IntToPtrRecoversProvenanceFromTheAddress) {
  KernelBuilder k("roundtrip");
  Value *in = k.ptr_arg(Scalar::I32, "in");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  Value *delta = k.arg(scalar_type(Scalar::I64), "delta");
  Value *address = k.binary(OpCode::Add, k.ptr_to_int(in), delta);
  k.at_line(50);
  Value *p = k.int_to_ptr(address, Scalar::I32);
  k.store(out, k.load(p));
  // Casts between pointers and integers mean the same as the dedicated ops.
  Value *as_int = k.cast(in, Scalar::I64);
  Value *back = k.bitcast(as_int, Scalar::Ptr);
  (void)back;
  const ir::Function &f = k.finish();
  std::vector<int32_t> src{10, 20, 30, 40}, dst(1, 0);
  interpret(f, Grid(1),
            {buffer_arg(src), buffer_arg(dst), KernelArg::of_int(8)});
  EXPECT_EQ(dst[0], 30);
  // Just past the end lies in no argument's buffer: with every size known,
  // nothing can vouch for it.
  std::string m = error_of([&] {
    interpret(f, Grid(1),
              {buffer_arg(src), buffer_arg(dst), KernelArg::of_int(16)});
  });
  EXPECT_CONTAINS(m, "invalid load: lane 0 reads 4 bytes at " +
                         hex(src.data() + 4));
  EXPECT_CONTAINS(m, "derives from no pointer argument");
}

TEST(InterpreterMemory, DuplicateStoreAddressesKeepTheLastLane) {
  KernelBuilder k("dups");
  Value *out = k.ptr_arg(Scalar::I32, "out");
  Value *zeros = k.int_const(0, Scalar::I32, {4});
  k.store(k.pointers(out, zeros), k.arange(10, 14));
  const ir::Function &f = k.finish();
  std::vector<int32_t> dst(1, -1);
  interpret(f, Grid(1), {buffer_arg(dst)});
  EXPECT_EQ(dst[0], 13);
}

TEST(InterpreterMemory, BoolsAreBytesInMemory) {
  KernelBuilder k("bools");
  Value *in = k.ptr_arg(Scalar::I1, "in");
  Value *out = k.ptr_arg(Scalar::I1, "out");
  Value *lanes = k.arange(0, 4);
  k.store(k.pointers(out, lanes),
          k.unary(OpCode::Not, k.load(k.pointers(in, lanes))));
  const ir::Function &f = k.finish();
  std::vector<uint8_t> src{0, 1, 2, 0},
      dst(4, 0xab); // any nonzero byte is true
  interpret(f, Grid(1), {buffer_arg(src), buffer_arg(dst)});
  EXPECT_EQ(dst, (std::vector<uint8_t>{1, 0, 0, 1}));
}

// --------------------------------------------------------------- atomics

TEST(InterpreterMemory, AtomicAddReturnsOldValuesInLaneAndProgramOrder) {
  KernelBuilder k("count");
  Value *counter = k.ptr_arg(Scalar::I32, "counter");
  Value *olds = k.ptr_arg(Scalar::I32, "olds");
  // Every lane of every program adds 1 to the same counter; lane 3 is off.
  Value *lanes = k.arange(0, 4);
  Value *mask = k.cmp("ne", lanes, k.int_const(3, Scalar::I32, {4}));
  Value *old = k.atomic_rmw("add", k.splat(counter, {4}),
                            k.int_const(1, Scalar::I32, {4}), mask);
  Value *slot = k.binary(OpCode::Add,
                         k.splat(k.binary(OpCode::Mul, k.program_id(0),
                                          k.int_const(4, Scalar::I32)),
                                 {4}),
                         lanes);
  k.store(k.pointers(olds, slot), old);
  const ir::Function &f = k.finish();
  std::vector<int32_t> count(1, 100), o(20, -1);
  interpret(f, Grid(5), {buffer_arg(count), buffer_arg(o)});
  EXPECT_EQ(count[0], 115);
  for (int p = 0; p < 5; ++p) {
    for (int l = 0; l < 3; ++l)
      EXPECT_EQ(o[p * 4 + l], 100 + p * 3 + l);
    EXPECT_EQ(o[p * 4 + 3], 0); // masked-off lanes return 0
  }
}

template <typename T>
std::pair<std::vector<T>, std::vector<T>>
atomic_apply(const std::string &kind, Scalar s, std::vector<T> memory,
             const std::vector<T> &values) {
  KernelBuilder k("atomic_" + kind);
  Value *p = k.ptr_arg(s, "p");
  Value *v = k.ptr_arg(s, "v");
  Value *olds = k.ptr_arg(s, "olds");
  int64_t n = static_cast<int64_t>(values.size());
  Value *lanes = k.arange(0, n);
  Value *old =
      k.atomic_rmw(kind, k.pointers(p, lanes), k.load(k.pointers(v, lanes)));
  k.store(k.pointers(olds, lanes), old);
  const ir::Function &f = k.finish();
  std::vector<T> vals = values, o(values.size());
  interpret(f, Grid(1), {buffer_arg(memory), buffer_arg(vals), buffer_arg(o)});
  return {memory, o};
}

TEST(InterpreterMemory, AtomicKindsFollowTheElementType) {
  std::vector<int32_t> m{5, -5, 0x0f0f, 7}, v{-3, 3, 0x00ff, 9};
  EXPECT_EQ(atomic_apply("max", Scalar::I32, m, v).first,
            (std::vector<int32_t>{5, 3, 0x0f0f, 9}));
  EXPECT_EQ(atomic_apply("min", Scalar::I32, m, v).first,
            (std::vector<int32_t>{-3, -5, 0xff, 7}));
  EXPECT_EQ(atomic_apply("and", Scalar::I32, m, v).first,
            (std::vector<int32_t>{5 & -3, -5 & 3, 0x0f, 7 & 9}));
  EXPECT_EQ(atomic_apply("or", Scalar::I32, m, v).first,
            (std::vector<int32_t>{5 | -3, -5 | 3, 0x0fff, 7 | 9}));
  EXPECT_EQ(atomic_apply("xor", Scalar::I32, m, v).first,
            (std::vector<int32_t>{5 ^ -3, -5 ^ 3, 0x0ff0, 7 ^ 9}));
  auto [after, old] = atomic_apply("xchg", Scalar::I32, m, v);
  EXPECT_EQ(after, v);
  EXPECT_EQ(old, m);
  // Unsigned: the same bits compare the other way.
  std::vector<uint32_t> um{5, 0xfffffffbu}, uv{0xfffffffdu, 3};
  EXPECT_EQ(atomic_apply("max", Scalar::U32, um, uv).first,
            (std::vector<uint32_t>{0xfffffffdu, 0xfffffffbu}));
  // Floats: add is a float add; max ignores NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> fm{1.5f, nan, -0.0f}, fv{0.25f, 2.0f, 0.0f};
  EXPECT_EQ(atomic_apply("add", Scalar::F32, fm, fv).first[0], 1.75f);
  auto fmax = atomic_apply("max", Scalar::F32, fm, fv).first;
  EXPECT_EQ(fmax[1], 2.0f);
  EXPECT_FALSE(std::signbit(fmax[2]));
}

TEST(InterpreterMemory, AtomicErrorsAreReportedBeforeAnyUpdate) {
  std::vector<float> fm{1.0f}, fv{1.0f};
  std::string m = error_of([&] { atomic_apply("fadd", Scalar::F32, fm, fv); });
  EXPECT_CONTAINS(m, "unknown atomic kind 'fadd'");
  m = error_of([&] { atomic_apply("xor", Scalar::F32, fm, fv); });
  EXPECT_CONTAINS(m, "atomic xor is not defined on f32");

  KernelBuilder k("atomic_oob");
  Value *p = k.ptr_arg(Scalar::I32, "p");
  Value *lanes = k.arange(0, 4);
  k.at_line(60);
  k.atomic_rmw("add", k.pointers(p, lanes), k.int_const(1, Scalar::I32, {4}));
  const ir::Function &f = k.finish();
  std::vector<int32_t> mem(4, 0);
  m = error_of(
      [&] { interpret(f, Grid(1), {KernelArg::of_pointer(mem.data(), 12)}); });
  EXPECT_CONTAINS(m, "atomic_rmw at kernel_test.cpp:60: out-of-bounds atomic: "
                     "lane 3 updates 4 bytes");
  EXPECT_EQ(mem, (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(InterpreterMemory, AtomicCasLetsOnlyTheFirstProgramIn) {
  KernelBuilder k("lock");
  Value *lock = k.ptr_arg(Scalar::I32, "lock");
  Value *seen = k.ptr_arg(Scalar::I32, "seen");
  Value *pid = k.program_id(0);
  Value *old =
      k.atomic_cas(lock, k.int_const(0, Scalar::I32),
                   k.binary(OpCode::Add, pid, k.int_const(1, Scalar::I32)));
  k.store(k.addptr(seen, pid), old);
  const ir::Function &f = k.finish();
  std::vector<int32_t> l(1, 0), s(4, -1);
  interpret(f, Grid(4), {buffer_arg(l), buffer_arg(s)});
  EXPECT_EQ(l[0], 1);
  EXPECT_EQ(s, (std::vector<int32_t>{0, 1, 1, 1}));
}

} // namespace
} // namespace blocc::interp
