// The host side of TMA without a GPU: what the tensor map encoder
// (runtime/cuda/tensor_map.h) passes cuTensorMapEncodeTiled, checked
// against tests/fake_cuda's driver (loaded here by its path and handed to
// the encoder, so that the rest of this binary keeps whatever driver
// BLOCC_CUDA_DRIVER names), and the errors for what TMA cannot copy.
#include "fake_cuda/fake_cuda_driver.h"
#include "runtime/cuda/tensor_map.h"

#include "ir/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace cuda = blocc::cuda;
namespace driver = blocc::cuda::driver;
using blocc::KernelArg;
using cuda::TensorMapValue;
using ::testing::HasSubstr;

/// Where the fake driver is: its path in the build, else beside this
/// program (a test binary carried to another machine with the library).
std::string fake_driver_path() {
  const std::string built = BLOCC_FAKE_CUDA_DRIVER;
  if (::access(built.c_str(), R_OK) == 0)
    return built;
  std::string program(4096, '\0');
  ssize_t length = ::readlink("/proc/self/exe", program.data(), program.size());
  if (length <= 0)
    return built;
  program.resize(length);
  return program.substr(0, program.rfind('/') + 1) +
         built.substr(built.rfind('/') + 1);
}

/// tests/fake_cuda's driver, loaded once, and the entry points read here.
struct FakeDriver {
  void *library = nullptr;
  driver::CuTensorMapEncodeTiled encode = nullptr;
  blocc_fake_cuda::LastTensorMapEncode last_encode = nullptr;

  static const FakeDriver &get() {
    static const FakeDriver fake = [] {
      FakeDriver f;
      f.library = dlopen(fake_driver_path().c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!f.library)
        return f;
      f.encode = reinterpret_cast<driver::CuTensorMapEncodeTiled>(
          dlsym(f.library, "cuTensorMapEncodeTiled"));
      f.last_encode = reinterpret_cast<blocc_fake_cuda::LastTensorMapEncode>(
          dlsym(f.library, "blocc_fake_cuda_last_tensor_map_encode"));
      return f;
    }();
    return fake;
  }
  blocc_fake_cuda::TensorMapEncode last() const {
    blocc_fake_cuda::TensorMapEncode e;
    EXPECT_EQ(last_encode(&e), 1) << "no cuTensorMapEncodeTiled call";
    return e;
  }
};

const FakeDriver &fake_driver() {
  const FakeDriver &f = FakeDriver::get();
  EXPECT_TRUE(f.encode && f.last_encode)
      << "the fake driver " << fake_driver_path() << " did not load";
  return f;
}

/// A buffer whose start is aligned to 256 bytes, as device memory is.
struct AlignedBytes {
  std::vector<unsigned char> storage;
  unsigned char *start;
  explicit AlignedBytes(size_t bytes) : storage(bytes + 256) {
    auto address = reinterpret_cast<uintptr_t>(storage.data());
    start = storage.data() + (256 - address % 256) % 256;
  }
};

/// A row-major f16 [M, K] array passed as (a, M, K, stride_am): the
/// kernel's tile of 64 x 64 (rows x columns), dims innermost first.
cuda::TensorMapRequest f16_rows_request() {
  cuda::TensorMapRequest r;
  r.element = cuda::TensorMapElement::F16;
  r.address_argument = 0;
  r.global_dims = {TensorMapValue::of_argument(2),
                   TensorMapValue::of_argument(1)}; // {K, M}
  r.global_strides = {TensorMapValue::of_argument(3)};
  r.box_dims = {64, 64}; // 64 f16 = 128 bytes a row: the 128B swizzle
  r.swizzle = cuda::TensorMapSwizzle::B128;
  r.l2_promotion = cuda::TensorMapL2Promotion::B256;
  return r;
}

std::vector<KernelArg> f16_rows_args(void *a, int64_t m, int64_t k,
                                     int64_t stride_am) {
  return {KernelArg::of_pointer(a), KernelArg::of_int(m), KernelArg::of_int(k),
          KernelArg::of_int(stride_am)};
}

/// The message encoding throws, or "" when it does not.
std::string encoding_error(const cuda::TensorMapRequest &request,
                           const std::vector<KernelArg> &args) {
  try {
    cuda::tensor_map_encoding(request, args, "kernel 'k', tensor map 0");
  } catch (const blocc::Error &e) {
    return e.what();
  }
  return "";
}

TEST(TensorMap, EncodesARowMajorF16Matrix) {
  const FakeDriver &fake = fake_driver();
  ASSERT_TRUE(fake.encode);
  AlignedBytes a(512 * 384 * 2);
  driver::CUtensorMap map = cuda::encode_tensor_map(
      f16_rows_request(), f16_rows_args(a.start, 512, 384, 384),
      "kernel 'k', tensor map 0", fake.encode);
  blocc_fake_cuda::TensorMapEncode e = fake.last();
  EXPECT_EQ(e.data_type, driver::CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(e.rank, 2u);
  EXPECT_EQ(e.global_address, a.start);
  EXPECT_EQ(e.global_dims[0], 384u);        // K, innermost
  EXPECT_EQ(e.global_dims[1], 512u);        // M
  EXPECT_EQ(e.global_strides[0], 384u * 2); // a row, in bytes
  EXPECT_EQ(e.box_dims[0], 64u);
  EXPECT_EQ(e.box_dims[1], 64u);
  EXPECT_EQ(e.element_strides[0], 1u);
  EXPECT_EQ(e.element_strides[1], 1u);
  EXPECT_EQ(e.interleave, driver::CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(e.swizzle, driver::CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(e.l2_promotion, driver::CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(e.oob_fill, driver::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  // The map returned is what the driver wrote (its own copy, so the
  // driver's pointer was to a temporary, 64-byte aligned as required).
  unsigned char bytes[128];
  std::memcpy(bytes, &map, sizeof bytes);
  void *address;
  std::memcpy(&address, bytes, sizeof address);
  EXPECT_EQ(address, a.start);
  for (int i = 8; i < 128; ++i)
    EXPECT_EQ(bytes[i], blocc_fake_cuda::tensor_map_byte(i)) << "byte " << i;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e.tensor_map) % 64, 0u);
}

TEST(TensorMap, EncodesA3DTensorWithConstantsAndPaddedRows) {
  const FakeDriver &fake = fake_driver();
  ASSERT_TRUE(fake.encode);
  // A bf16 [B=3, M=100, K=40] tensor whose rows are padded to 48 elements
  // (96 bytes) and whose batches are 100 x 48 elements apart; K and the
  // strides are constants the kernel was specialized on, B and M
  // arguments. Box [1, 32, 32]: 64-byte rows under the 64B swizzle.
  AlignedBytes a(3 * 100 * 48 * 2);
  cuda::TensorMapRequest r;
  r.element = cuda::TensorMapElement::BF16;
  r.address_argument = 1;
  r.global_dims = {TensorMapValue::of_constant(40),
                   TensorMapValue::of_argument(2),
                   TensorMapValue::of_argument(0)};
  r.global_strides = {TensorMapValue::of_constant(48),
                      TensorMapValue::of_constant(100 * 48)};
  r.box_dims = {32, 32, 1};
  r.swizzle = cuda::TensorMapSwizzle::B64;
  r.l2_promotion = cuda::TensorMapL2Promotion::None;
  std::vector<KernelArg> args = {KernelArg::of_int(3),
                                 KernelArg::of_pointer(a.start),
                                 KernelArg::of_int(100)};
  cuda::encode_tensor_map(r, args, "kernel 'k', tensor map 0", fake.encode);
  blocc_fake_cuda::TensorMapEncode e = fake.last();
  EXPECT_EQ(e.data_type, driver::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(e.rank, 3u);
  EXPECT_EQ(e.global_address, a.start);
  EXPECT_EQ(e.global_dims[0], 40u);
  EXPECT_EQ(e.global_dims[1], 100u);
  EXPECT_EQ(e.global_dims[2], 3u);
  EXPECT_EQ(e.global_strides[0], 96u);
  EXPECT_EQ(e.global_strides[1], 100u * 96);
  EXPECT_EQ(e.box_dims[0], 32u);
  EXPECT_EQ(e.box_dims[1], 32u);
  EXPECT_EQ(e.box_dims[2], 1u);
  for (int d = 0; d < 3; ++d)
    EXPECT_EQ(e.element_strides[d], 1u);
  EXPECT_EQ(e.swizzle, driver::CU_TENSOR_MAP_SWIZZLE_64B);
  EXPECT_EQ(e.l2_promotion, driver::CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

TEST(TensorMap, ParametersAre64ByteAlignedMapsInOrder) {
  const FakeDriver &fake = fake_driver();
  ASSERT_TRUE(fake.encode);
  AlignedBytes a(256 * 256 * 2), b(256 * 256 * 2);
  cuda::TensorMapRequest ra = f16_rows_request();
  cuda::TensorMapRequest rb = f16_rows_request();
  rb.address_argument = 4;
  std::vector<KernelArg> args = f16_rows_args(a.start, 256, 256, 256);
  args.push_back(KernelArg::of_pointer(b.start));
  std::vector<driver::CUtensorMap> maps;
  void *parameters[2] = {};
  cuda::encode_tensor_map_parameters({ra, rb}, args, "k", maps, parameters,
                                     fake.encode);
  ASSERT_EQ(maps.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(parameters[i], &maps[i]);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(parameters[i]) % 64, 0u);
    void *address;
    std::memcpy(&address, parameters[i], sizeof address);
    EXPECT_EQ(address, i == 0 ? a.start : b.start) << "map " << i;
  }
}

TEST(TensorMap, MisalignedBaseNamesTheArgument) {
  AlignedBytes a(4096);
  std::string error = encoding_error(f16_rows_request(),
                                     f16_rows_args(a.start + 8, 16, 64, 64));
  EXPECT_THAT(error, HasSubstr("kernel 'k', tensor map 0: runtime argument 0 "
                               "(the tensor's base address)"));
  EXPECT_THAT(error, HasSubstr("not 16-byte aligned"));
}

TEST(TensorMap, StrideNotAMultipleOf16BytesNamesTheArgument) {
  AlignedBytes a(4096);
  // 100 f16 = 200 bytes a row.
  std::string error =
      encoding_error(f16_rows_request(), f16_rows_args(a.start, 16, 100, 100));
  EXPECT_THAT(error, HasSubstr("runtime argument 3 (the stride of dimension 1, "
                               "in elements of 2 bytes) is 100 elements = "
                               "200 bytes, not a multiple of 16 bytes"));
}

TEST(TensorMap, BoxTooLargeIsNamed) {
  AlignedBytes a(4096);
  cuda::TensorMapRequest r = f16_rows_request();
  r.box_dims = {64, 512};
  std::string error = encoding_error(r, f16_rows_args(a.start, 1024, 64, 64));
  EXPECT_THAT(error, HasSubstr("tensor map 0: box dimension 1"));
  EXPECT_THAT(error, HasSubstr("is 512; TMA copies boxes of 1 to 256"));
}

TEST(TensorMap, InnerBoxWiderThanTheSwizzleSpan) {
  AlignedBytes a(4096);
  cuda::TensorMapRequest r = f16_rows_request();
  r.box_dims = {128, 64}; // 256 bytes a row
  std::string error = encoding_error(r, f16_rows_args(a.start, 64, 256, 256));
  EXPECT_THAT(error, HasSubstr("the box's inner dimension is 128 elements = "
                               "256 bytes, wider than the 128-byte swizzle "
                               "span"));
  EXPECT_THAT(error, HasSubstr("at most 64 elements with this swizzle"));
  r.swizzle = cuda::TensorMapSwizzle::B32;
  r.box_dims = {32, 64}; // 64 bytes
  EXPECT_THAT(encoding_error(r, f16_rows_args(a.start, 64, 256, 256)),
              HasSubstr("wider than the 32-byte swizzle span; at most 16 "
                        "elements"));
  // Without a swizzle the row may be as wide as the box allows.
  r.swizzle = cuda::TensorMapSwizzle::None;
  r.box_dims = {256, 64};
  EXPECT_EQ(encoding_error(r, f16_rows_args(a.start, 64, 256, 256)), "");
}

TEST(TensorMap, InnerBoxBytesNotAMultipleOf16) {
  AlignedBytes a(4096);
  cuda::TensorMapRequest r = f16_rows_request();
  r.box_dims = {4, 64}; // 8 bytes
  EXPECT_THAT(encoding_error(r, f16_rows_args(a.start, 64, 64, 64)),
              HasSubstr("inner dimension is 4 elements = 8 bytes, not a "
                        "multiple of 16 bytes"));
}

// An empty array (an extent of 0 or less, which descriptors allow: every
// load reads zeros) encodes a map of one element that the encoder places
// at a zero of its own, never at the user's buffer.
TEST(TensorMap, EmptyArraysEncodeOneElementAwayFromTheirBuffer) {
  AlignedBytes a(4096);
  for (int64_t rows : {int64_t{0}, int64_t{-5}}) {
    cuda::TensorMapEncoding e = cuda::tensor_map_encoding(
        f16_rows_request(), f16_rows_args(a.start, rows, 64, 64), "map");
    EXPECT_TRUE(e.empty);
    EXPECT_EQ(e.global_address, nullptr);
    EXPECT_EQ(e.global_dims[0], 1u);
    EXPECT_EQ(e.global_dims[1], 1u);
    EXPECT_EQ(e.global_strides[0], 16u);
  }
  // A's map when K is 0: its row stride (K) is 0 too.
  EXPECT_TRUE(cuda::tensor_map_encoding(f16_rows_request(),
                                        f16_rows_args(a.start, 64, 0, 0), "map")
                  .empty);
  EXPECT_FALSE(cuda::tensor_map_encoding(
                   f16_rows_request(), f16_rows_args(a.start, 1, 64, 64), "map")
                   .empty);
}

TEST(TensorMap, DimensionsOutOfRangeNameTheArgument) {
  AlignedBytes a(4096);
  EXPECT_THAT(encoding_error(f16_rows_request(),
                             f16_rows_args(a.start, 16, (int64_t{1} << 32) + 1,
                                           int64_t{1} << 33)),
              HasSubstr("runtime argument 2 (global dimension 0, the "
                        "innermost) is 4294967297"));
  // 2^32 itself is allowed.
  EXPECT_EQ(encoding_error(
                f16_rows_request(),
                f16_rows_args(a.start, 16, int64_t{1} << 32, int64_t{1} << 32)),
            "");
}

// A block pointer's 64-bit offsets are clamped to TMA's 32-bit
// coordinates, which is exact only for extents up to 2^31 - 257: a larger
// one is refused, naming the argument.
TEST(TensorMap, WideOffsetsTakeExtentsUpTo2To31Minus257) {
  AlignedBytes a(4096);
  cuda::TensorMapRequest wide = f16_rows_request();
  wide.wide_offsets = true;
  const int64_t largest = cuda::kMaxWideOffsetExtent;
  EXPECT_EQ(largest, 2147483391);
  EXPECT_EQ(encoding_error(wide, f16_rows_args(a.start, largest, 64, 64)), "");
  EXPECT_THAT(
      encoding_error(wide, f16_rows_args(a.start, largest + 1, 64, 64)),
      HasSubstr("runtime argument 1 (global dimension 1) is 2147483392; "
                "tiles of a block pointer that TMA copies take dimensions up "
                "to 2^31 - 257"));
  // Without wide offsets the same extent encodes.
  EXPECT_EQ(encoding_error(f16_rows_request(),
                           f16_rows_args(a.start, largest + 1, 64, 64)),
            "");
}

TEST(TensorMap, ArgumentsOfTheWrongKindAreNamed) {
  AlignedBytes a(4096);
  std::vector<KernelArg> args = f16_rows_args(a.start, 64, 64, 64);
  args[3] = KernelArg::of_float(64);
  EXPECT_THAT(encoding_error(f16_rows_request(), args),
              HasSubstr("runtime argument 3 (the stride of dimension 1, in "
                        "elements of 2 bytes) must be an integer, got a "
                        "float"));
  args = f16_rows_args(a.start, 64, 64, 64);
  args[0] = KernelArg::of_int(0);
  EXPECT_THAT(encoding_error(f16_rows_request(), args),
              HasSubstr("runtime argument 0 (the tensor's base address) must "
                        "be a pointer"));
}

TEST(TensorMap, MalformedRequestsAreCompilerBugs) {
  AlignedBytes a(4096);
  cuda::TensorMapRequest r = f16_rows_request();
  r.global_strides.clear();
  EXPECT_THAT(encoding_error(r, f16_rows_args(a.start, 64, 64, 64)),
              HasSubstr("malformed tensor map request (a compiler bug)"));
  r = f16_rows_request();
  r.global_dims[0] = TensorMapValue::of_argument(9);
  EXPECT_THAT(encoding_error(r, f16_rows_args(a.start, 64, 64, 64)),
              HasSubstr("reads runtime argument 9 of 4"));
}

} // namespace
