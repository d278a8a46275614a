// Tensor maps (the descriptors of TMA copies, sm_90 and newer) built on the
// host at launch: a compiled kernel that copies tiles with
// `cp.async.bulk.tensor` takes, after the user's parameters, one
// CUtensorMap per TensorMapRequest, passed by value as a
// `.param .align 64 .b8 name[128]`. The request says where each number of
// the map comes from (a launch argument or a constant the compiler knew);
// encode_tensor_map reads the launch's arguments, checks what TMA requires
// (each failure names the argument) and asks the driver
// (cuTensorMapEncodeTiled). Internal to runtime/ and backends/; no IR
// types, so that ahead-of-time launches can use it too.
#pragma once

#include "runtime/cuda/driver_api.h"
#include "runtime/kernel_args.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::cuda {

/// The element types a tensor map copies; the values are the driver's
/// CUtensorMapDataType.
enum class TensorMapElement : int {
  U8 = 0,
  U16 = 1,
  U32 = 2,
  I32 = 3,
  U64 = 4,
  I64 = 5,
  F16 = 6,
  F32 = 7,
  F64 = 8,
  BF16 = 9,
};
/// Bytes per element.
int element_bytes(TensorMapElement element);

/// How the copy lays a box's rows out in shared memory; the values are the
/// driver's CUtensorMapSwizzle. A swizzled box's inner dimension spans at
/// most the swizzle's bytes (32, 64 or 128).
enum class TensorMapSwizzle : int { None = 0, B32 = 1, B64 = 2, B128 = 3 };
/// The swizzle's span in bytes; 0 for None.
int swizzle_bytes(TensorMapSwizzle swizzle);

/// How much more than each request the L2 cache fetches; the values are
/// the driver's CUtensorMapL2promotion.
enum class TensorMapL2Promotion : int { None = 0, B64 = 1, B128 = 2, B256 = 3 };

/// One number of a tensor map: runtime argument `argument` of the launch
/// (an integer), or `constant` when argument < 0 (a value the compiler
/// specialized on).
struct TensorMapValue {
  int argument = -1;
  int64_t constant = 0;
  static TensorMapValue of_argument(int index) { return {index, 0}; }
  static TensorMapValue of_constant(int64_t value) { return {-1, value}; }
};

/// What a kernel needs of one tensor map. Dimensions go innermost first,
/// as the driver takes them (a row-major [M, K] array: dims {K, M}). The
/// map is always tiled with element strides 1, no interleave, and zeros
/// for elements out of bounds (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE).
struct TensorMapRequest {
  TensorMapElement element = TensorMapElement::F16;
  /// The pointer argument whose address is the tensor's element 0.
  int address_argument = 0;
  /// The tensor's extent per dimension, in elements; 1 to 5 of them (the
  /// rank).
  std::vector<TensorMapValue> global_dims;
  /// The distance between consecutive indices of dimensions 1 .. rank-1,
  /// in elements (the innermost dimension is contiguous): the encoder
  /// multiplies them by the element size, since the driver takes bytes.
  std::vector<TensorMapValue> global_strides;
  /// The box one copy moves (the descriptor's block shape, innermost
  /// first): each 1 to 256.
  std::vector<uint32_t> box_dims;
  TensorMapSwizzle swizzle = TensorMapSwizzle::B128;
  TensorMapL2Promotion l2_promotion = TensorMapL2Promotion::B128;
  /// Whether the kernel stores through the map (an empty array's map then
  /// points at a scratch element nothing reads, not at the zero loads
  /// read).
  bool stored = false;
  /// Whether the kernel's coordinates come from 64-bit offsets (a block
  /// pointer's), clamped to [-2^31, kMaxWideOffsetExtent] on their way to
  /// TMA's 32-bit coordinates: a box that starts at a clamped coordinate
  /// lies wholly outside the array (it reads zeros, writes nothing) only
  /// while every extent is at most kMaxWideOffsetExtent, which the encoder
  /// checks.
  bool wide_offsets = false;
};

/// The largest extent a map with wide_offsets takes: 2^31 - 257, so that
/// a box of up to 256 elements from there ends below 2^31.
constexpr int64_t kMaxWideOffsetExtent = (int64_t{1} << 31) - 257;

/// The arguments cuTensorMapEncodeTiled gets for a request and a launch's
/// arguments, checked.
struct TensorMapEncoding {
  driver::CUtensorMapDataType data_type{};
  unsigned rank = 0;
  void *global_address = nullptr;
  unsigned long long global_dims[5] = {};
  unsigned long long global_strides[4] = {}; ///< bytes, rank - 1 of them
  unsigned box_dims[5] = {};
  unsigned element_strides[5] = {};
  driver::CUtensorMapInterleave interleave{};
  driver::CUtensorMapSwizzle swizzle{};
  driver::CUtensorMapL2promotion l2_promotion{};
  driver::CUtensorMapFloatOOBfill oob_fill{};
  /// An extent is 0 or less: the array is empty, every load of it reads
  /// zeros and no store writes it. The map then describes a 1-element
  /// array (dims 1, strides 16 bytes) at a zero that encode_tensor_map
  /// provides, or a scratch element for a stored map (global_address
  /// nullptr here), so that no copy touches the user's buffer.
  bool empty = false;
};

/// The driver's arguments for `request` with the launch's `args`. Throws
/// blocc::Error, starting with `what` (e.g. "kernel 'matmul', tensor map
/// 0") and naming the runtime argument at fault, when TMA cannot copy it:
/// a base address not 16-byte aligned, a dimension above 2^32 (one of 0
/// or less makes the map `empty`), a
/// stride not a positive multiple of 16 bytes below 2^40, a box dimension
/// not from 1 to 256, or an inner box row whose bytes are not a multiple
/// of 16 or exceed the swizzle's span. Needs no driver.
TensorMapEncoding tensor_map_encoding(const TensorMapRequest &request,
                                      const std::vector<KernelArg> &args,
                                      const std::string &what);

/// The tensor map for `request` with the launch's `args`, encoded by
/// `encode` (nullptr: the driver's cuTensorMapEncodeTiled; an error when
/// the driver predates CUDA 12). Checks as tensor_map_encoding does;
/// driver errors name `what` too.
driver::CUtensorMap
encode_tensor_map(const TensorMapRequest &request,
                  const std::vector<KernelArg> &args,
                  const std::string &what = "a tensor map",
                  driver::CuTensorMapEncodeTiled encode = nullptr);

/// The tensor maps one launch passes after the user's parameters: encoded
/// into `maps` (resized to one per request; CUtensorMap is 64-byte
/// aligned, so each is where the kernel's `.param .align 64` expects to
/// copy from) and parameters[i] pointed at maps[i]. `kernel` names the
/// kernel in errors.
void encode_tensor_map_parameters(
    const std::vector<TensorMapRequest> &requests,
    const std::vector<KernelArg> &args, const std::string &kernel,
    std::vector<driver::CUtensorMap> &maps, void **parameters,
    driver::CuTensorMapEncodeTiled encode = nullptr);

} // namespace blocc::cuda
