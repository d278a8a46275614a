#include "runtime/cuda/tensor_map.h"

#include <map>
#include <mutex>

#include "ir/error.h"

#include <cstdio>

namespace blocc::cuda {

// The request's enums are the driver's values, so that converting is a
// cast.
static_assert(static_cast<int>(TensorMapElement::BF16) ==
              driver::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
static_assert(static_cast<int>(TensorMapSwizzle::B128) ==
              driver::CU_TENSOR_MAP_SWIZZLE_128B);
static_assert(static_cast<int>(TensorMapL2Promotion::B256) ==
              driver::CU_TENSOR_MAP_L2_PROMOTION_L2_256B);

int element_bytes(TensorMapElement element) {
  switch (element) {
  case TensorMapElement::U8:
    return 1;
  case TensorMapElement::U16:
  case TensorMapElement::F16:
  case TensorMapElement::BF16:
    return 2;
  case TensorMapElement::U32:
  case TensorMapElement::I32:
  case TensorMapElement::F32:
    return 4;
  case TensorMapElement::U64:
  case TensorMapElement::I64:
  case TensorMapElement::F64:
    return 8;
  }
  throw Error("unknown tensor map element type " +
              std::to_string(static_cast<int>(element)));
}

int swizzle_bytes(TensorMapSwizzle swizzle) {
  switch (swizzle) {
  case TensorMapSwizzle::None:
    return 0;
  case TensorMapSwizzle::B32:
    return 32;
  case TensorMapSwizzle::B64:
    return 64;
  case TensorMapSwizzle::B128:
    return 128;
  }
  throw Error("unknown tensor map swizzle " +
              std::to_string(static_cast<int>(swizzle)));
}

namespace {

// The driver's limits (cuTensorMapEncodeTiled's documented requirements).
constexpr int kMaxRank = 5;
constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr uint64_t kStrideLimit = uint64_t{1} << 40; // strides stay below
constexpr uint64_t kMaxBox = 256;
constexpr uint64_t kAlignment = 16; // of the base and of every stride

/// A request that the compiler made wrong (not the user's launch).
[[noreturn]] void malformed(const std::string &what, const std::string &why) {
  throw Error(what + ": malformed tensor map request (a compiler bug): " + why);
}

/// The value of one number of the map, with how messages name it.
struct Resolved {
  int64_t value;
  std::string source; // "runtime argument 3" or "the constant 64"
};

Resolved resolve(const TensorMapValue &v, const std::vector<KernelArg> &args,
                 const std::string &what, const std::string &role) {
  if (v.argument < 0)
    return {v.constant, "the constant " + std::to_string(v.constant)};
  if (static_cast<size_t>(v.argument) >= args.size())
    malformed(what, role + " reads runtime argument " +
                        std::to_string(v.argument) + " of " +
                        std::to_string(args.size()));
  const KernelArg &a = args[v.argument];
  std::string source = "runtime argument " + std::to_string(v.argument);
  if (a.kind != KernelArg::Kind::Int)
    throw Error(what + ": " + source + " (" + role +
                ") must be an integer, got " +
                (a.kind == KernelArg::Kind::Pointer ? "a pointer" : "a float"));
  return {a.int_value, source};
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(value));
  return text;
}

} // namespace

TensorMapEncoding tensor_map_encoding(const TensorMapRequest &request,
                                      const std::vector<KernelArg> &args,
                                      const std::string &what) {
  const size_t rank = request.global_dims.size();
  if (rank < 1 || rank > static_cast<size_t>(kMaxRank))
    malformed(what, "rank " + std::to_string(rank) + ", not from 1 to 5");
  if (request.global_strides.size() != rank - 1 ||
      request.box_dims.size() != rank)
    malformed(what, std::to_string(rank) + " dimensions but " +
                        std::to_string(request.global_strides.size()) +
                        " strides and " +
                        std::to_string(request.box_dims.size()) +
                        " box dimensions");
  const uint64_t bytes = element_bytes(request.element);
  const int span = swizzle_bytes(request.swizzle);

  TensorMapEncoding e;
  e.data_type = static_cast<driver::CUtensorMapDataType>(request.element);
  e.rank = static_cast<unsigned>(rank);

  if (request.address_argument < 0 ||
      static_cast<size_t>(request.address_argument) >= args.size())
    malformed(what, "the global address reads runtime argument " +
                        std::to_string(request.address_argument) + " of " +
                        std::to_string(args.size()));
  const KernelArg &base = args[request.address_argument];
  const std::string base_name =
      "runtime argument " + std::to_string(request.address_argument);
  if (base.kind != KernelArg::Kind::Pointer)
    throw Error(what + ": " + base_name +
                " (the tensor's base address) must be a pointer");
  const auto address = reinterpret_cast<uintptr_t>(base.pointer);
  if (address % kAlignment != 0)
    throw Error(what + ": " + base_name + " (the tensor's base address) is " +
                hex(address) +
                ", not 16-byte aligned; TMA copies need a 16-byte aligned "
                "base (pass the buffer's start or an offset of a multiple "
                "of 16 bytes)");
  e.global_address = base.pointer;

  for (size_t d = 0; d < rank; ++d) {
    const std::string role = "global dimension " + std::to_string(d) +
                             (d == 0 ? ", the innermost" : "");
    Resolved dim = resolve(request.global_dims[d], args, what, role);
    if (dim.value > 0 && static_cast<uint64_t>(dim.value) > kMaxDim)
      throw Error(what + ": " + dim.source + " (" + role + ") is " +
                  std::to_string(dim.value) +
                  "; TMA takes dimensions up to 2^32");
    if (request.wide_offsets && dim.value > kMaxWideOffsetExtent)
      throw Error(what + ": " + dim.source + " (" + role + ") is " +
                  std::to_string(dim.value) +
                  "; tiles of a block pointer that TMA copies take "
                  "dimensions up to 2^31 - 257 (its 64-bit offsets become "
                  "TMA's 32-bit coordinates); index such arrays through "
                  "pointers");
    e.empty = e.empty || dim.value < 1;
    e.global_dims[d] = static_cast<unsigned long long>(dim.value);
  }
  // An empty array's strides describe nothing (a K of 0 makes A's row
  // stride 0): its map is the one-element array below.
  for (size_t d = 1; d < rank && !e.empty; ++d) {
    const std::string role = "the stride of dimension " + std::to_string(d) +
                             ", in elements of " + std::to_string(bytes) +
                             " bytes";
    Resolved stride = resolve(request.global_strides[d - 1], args, what, role);
    // Checked before multiplying, so that the product cannot overflow.
    if (stride.value < 1 ||
        static_cast<uint64_t>(stride.value) >= kStrideLimit / bytes)
      throw Error(what + ": " + stride.source + " (" + role + ") is " +
                  std::to_string(stride.value) +
                  "; TMA takes strides from 1 element to below 2^40 bytes");
    uint64_t stride_bytes = static_cast<uint64_t>(stride.value) * bytes;
    if (stride_bytes % kAlignment != 0)
      throw Error(what + ": " + stride.source + " (" + role + ") is " +
                  std::to_string(stride.value) +
                  " elements = " + std::to_string(stride_bytes) +
                  " bytes, not a multiple of 16 bytes, which TMA needs of "
                  "every stride (pad the rows)");
    e.global_strides[d - 1] = stride_bytes;
  }
  for (size_t d = 0; d < rank; ++d) {
    uint64_t box = request.box_dims[d];
    if (box < 1 || box > kMaxBox)
      throw Error(what + ": box dimension " + std::to_string(d) +
                  " (innermost first: the block shape reversed) is " +
                  std::to_string(box) +
                  "; TMA copies boxes of 1 to 256 elements per dimension");
    e.box_dims[d] = static_cast<unsigned>(box);
    e.element_strides[d] = 1;
  }
  const uint64_t inner_bytes = request.box_dims[0] * bytes;
  if (inner_bytes % kAlignment != 0)
    throw Error(what + ": the box's inner dimension is " +
                std::to_string(request.box_dims[0]) +
                " elements = " + std::to_string(inner_bytes) +
                " bytes, not a multiple of 16 bytes, which TMA needs");
  if (span && inner_bytes > static_cast<uint64_t>(span))
    throw Error(what + ": the box's inner dimension is " +
                std::to_string(request.box_dims[0]) + " elements = " +
                std::to_string(inner_bytes) + " bytes, wider than the " +
                std::to_string(span) + "-byte swizzle span; at most " +
                std::to_string(span / bytes) + " elements with this swizzle");
  if (e.empty) {
    // Nothing to read: every box falls outside a 1-element array (at
    // coordinates other than 0) or reads its one element, a zero that
    // encode_tensor_map places; the user's buffer is never touched.
    e.global_address = nullptr;
    for (size_t d = 0; d < rank; ++d)
      e.global_dims[d] = 1;
    for (size_t d = 1; d < rank; ++d)
      e.global_strides[d - 1] = kAlignment;
  }
  e.interleave = driver::CU_TENSOR_MAP_INTERLEAVE_NONE;
  e.swizzle = static_cast<driver::CUtensorMapSwizzle>(request.swizzle);
  e.l2_promotion =
      static_cast<driver::CUtensorMapL2promotion>(request.l2_promotion);
  e.oob_fill = driver::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return e;
}

namespace {

/// 16 zero bytes of device memory in the current context: what the map of
/// an empty array reads; or, for a stored map, 16 scratch bytes that its
/// copies may write and nothing reads. One block of each per context, kept
/// while the process runs.
void *empty_array_block(const std::string &what, bool stored) {
  static std::mutex mutex;
  static std::map<std::pair<driver::CUcontext, bool>, driver::CUdeviceptr>
      blocks;
  driver::CUcontext context = nullptr;
  driver::check(driver::api().cuCtxGetCurrent(&context), "cuCtxGetCurrent",
                what);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = blocks.find({context, stored});
  if (it == blocks.end()) {
    driver::CUdeviceptr block = 0;
    driver::check(driver::api().cuMemAlloc(&block, kAlignment), "cuMemAlloc",
                  what);
    driver::check(driver::api().cuMemsetD8(block, 0, kAlignment), "cuMemsetD8",
                  what);
    it = blocks.emplace(std::make_pair(context, stored), block).first;
  }
  return reinterpret_cast<void *>(it->second);
}

} // namespace

driver::CUtensorMap encode_tensor_map(const TensorMapRequest &request,
                                      const std::vector<KernelArg> &args,
                                      const std::string &what,
                                      driver::CuTensorMapEncodeTiled encode) {
  TensorMapEncoding e = tensor_map_encoding(request, args, what);
  if (!encode) {
    encode = driver::api().cuTensorMapEncodeTiled;
    if (!encode)
      throw Error(what + ": the CUDA driver lacks cuTensorMapEncodeTiled; "
                         "tensor maps need a driver for CUDA 12.0 or newer");
  }
  if (e.empty)
    e.global_address = empty_array_block(what, request.stored);
  driver::CUtensorMap map;
  driver::check(encode(&map, e.data_type, e.rank, e.global_address,
                       e.global_dims, e.global_strides, e.box_dims,
                       e.element_strides, e.interleave, e.swizzle,
                       e.l2_promotion, e.oob_fill),
                "cuTensorMapEncodeTiled", what);
  return map;
}

void encode_tensor_map_parameters(const std::vector<TensorMapRequest> &requests,
                                  const std::vector<KernelArg> &args,
                                  const std::string &kernel,
                                  std::vector<driver::CUtensorMap> &maps,
                                  void **parameters,
                                  driver::CuTensorMapEncodeTiled encode) {
  maps.resize(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    maps[i] = encode_tensor_map(
        requests[i], args,
        "kernel '" + kernel + "', tensor map " + std::to_string(i), encode);
    parameters[i] = &maps[i];
  }
}

} // namespace blocc::cuda
