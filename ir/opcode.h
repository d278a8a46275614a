// Every operation of the block IR, with the facts that passes ask about an
// opcode as a whole (its printed name, whether it has side effects, whether
// it is elementwise). Operand and attribute conventions of each op are
// documented here, next to its name, and checked by the verifier.
#pragma once

#include <optional>
#include <string_view>

namespace blocc::ir {

enum class OpCode : uint8_t {
  // --- creation -----------------------------------------------------------
  Constant,    // () {value: int|float} -> scalar or splat block
  ProgramId,   // () {axis} -> i32
  NumPrograms, // () {axis} -> i32
  Arange,      // () {start, end} -> tensor<(end-start) x i32>
  // --- shape --------------------------------------------------------------
  Splat,      // (scalar) -> block of that scalar
  Broadcast,  // (block) -> block; dims of size 1 stretch to the result's
  ExpandDims, // (block|scalar) {axis} -> rank + 1 with a 1 at axis
  Reshape,    // (block) -> block of the same element count
  Permute,    // (block) {order} -> result dim i = operand dim order[i]
  Join,       // (a, b) -> shape of a + [2]
  Split,      // (a) -> two results; a's last dim is 2
  Cat,        // (a, b) {axis} -> concatenation along axis
  // --- conversions --------------------------------------------------------
  Cast,     // (x) -> same shape, other element type (numeric convert)
  Bitcast,  // (x) -> same shape, element of the same bit width
  PtrToInt, // (ptr) -> i64
  IntToPtr, // (i64) -> ptr
  // --- elementwise arithmetic: operands and result share one type --------
  Add,
  Sub,
  Mul,
  Div, // floats: IEEE division; integers: truncating, by signedness
  Rem, // floats: fmod; integers: sign of the dividend
  And,
  Or,
  Xor,
  Shl,
  Shr, // arithmetic for signed, logical for unsigned element types
  Minimum,
  Maximum, // floats: a NaN operand yields the other operand
  Umulhi,  // high half of the full integer product (unsigned)
  Cmp,     // (a, b) {predicate: eq|ne|lt|le|gt|ge} -> i1 of that shape
  AddPtr,  // (ptr, integer offset in elements) -> ptr
  Neg,
  Not,
  Abs,
  Exp,
  Exp2,
  Log,
  Log2,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tanh,
  Erf,
  Floor,
  Ceil,
  Fma,    // (a, b, c) -> a * b + c, rounded once
  Select, // (cond i1, a, b) -> cond ? a : b
  // --- memory -------------------------------------------------------------
  Load,      // (ptr [, mask [, other]]) {cache, eviction, volatile}
  Store,     // (ptr, value [, mask]) {cache, eviction}
  AtomicRmw, // (ptr, value [, mask]) {kind, sem, scope} -> old value
  AtomicCas, // (ptr, compare, value) {sem, scope} -> old value
  // Tensor descriptors (a tile of a strided array, Triton's
  // make_tensor_descriptor); operand layout in ir/tensor_descriptor.h.
  // Elements outside the array read 0 and are not written.
  DescriptorLoad,  // (base, shape x r, strides x r, offsets x r) -> the
                   // tile: a rank-r block of base's pointee
  DescriptorStore, // (base, shape x r, strides x r, offsets x r, value)
  // --- collective ---------------------------------------------------------
  Reduce, // (x1..xN) {axis} region(2N args) yields N -> N results
  Scan,   // (x1..xN) {axis, reverse} region(2N args) yields N -> N
  Dot,    // (a MxK, b KxN, acc MxN) {input_precision} -> MxN
  // --- hints: identity on the value, facts for the axis-info analysis ----
  MultipleOf,    // (x) {values: per-dim divisibility}
  MaxContiguous, // (x) {values: per-dim contiguity}
  MaxConstancy,  // (x) {values: per-dim constancy}
  // --- a backend's level of the IR: never in block IR users write --------
  ConvertLayout, // (block) -> the same block: an identity that a backend's
                 // level of the IR (the GPU IR) uses to move a value from
                 // one placement to another, which its attributes name
  // --- debug --------------------------------------------------------------
  Print,  // (values...) {prefix, hex}
  Assert, // (cond) {message}
  // --- structured control flow --------------------------------------------
  For,    // (lb, ub, step, init...) region(iv, carried...) -> carried
  If,     // (cond) then-region, else-region; each yields -> results
  Yield,  // terminator of a region: the values it hands back
  Return, // terminator of the function body
};

constexpr int kNumOpCodes = static_cast<int>(OpCode::Return) + 1;

std::string_view opcode_name(OpCode code);
std::optional<OpCode> opcode_from_name(std::string_view name);

/// Elementwise ops whose operands and result share one shape (and, except
/// for Cmp, Select, AddPtr and Cast-like ops, one type).
bool is_elementwise(OpCode code);
/// Ops that read or write memory, print, trap, or end a region: never
/// removed or merged by DCE/CSE.
bool has_side_effects(OpCode code);
/// Ops that read memory (loads and atomics): never merged by CSE.
bool is_memory_read(OpCode code);
/// Ops that write memory (stores and atomics).
bool is_memory_write(OpCode code);
/// Ops a combine region of reduce/scan may not hold: memory accesses,
/// print and assert (a combine is a pure function of the elements it
/// combines; the verifier rejects them there).
bool is_impure_in_combine(OpCode code);
bool is_commutative(OpCode code);
bool is_terminator(OpCode code);
/// Unary float math: exp, log, sqrt, ...
bool is_unary_math(OpCode code);
/// The elementwise op an atomic_rmw of `kind` combines memory and value
/// with (add, max, min, and, or, xor); none for xchg or an unknown kind.
std::optional<OpCode> atomic_combine(std::string_view kind);

} // namespace blocc::ir
