// Contexts a program makes itself (cuCtxCreate, not the primary context):
// while current, blocc allocates and launches in it and leaves it current;
// its buffers launched from a thread with no current context run in it;
// kernels are loaded once per context, also into a new context created
// where a destroyed one was (the driver may reuse the handle). Skipped
// (reported as skipped) where no GPU is present.
#include "nvptx/support.h"

#include "runtime/cuda/driver_api.h"

#include <thread>

namespace bl = blocc;
using namespace blocc::gpu_testing;
namespace driver = blocc::cuda::driver;

namespace {

auto increment = bl::kernel("increment", [](bl::Ptr<float> x, bl::i32 n,
                                            bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  bl::store(x + offsets, bl::load(x + offsets, offsets < n) + 1, offsets < n);
});

/// A context of GPU 0 made with cuCtxCreate (current on the creating
/// thread until popped), destroyed with the object.
class CreatedContext {
public:
  CreatedContext() {
    using Create =
        driver::CUresult (*)(driver::CUcontext *, unsigned, driver::CUdevice);
    auto create = reinterpret_cast<Create>(test_driver_entry("cuCtxCreate_v2"));
    driver::CUdevice device = 0;
    driver::check(driver::api().cuDeviceGet(&device, 0), "cuDeviceGet", "test");
    if (!create || create(&handle, 0, device) != driver::CUDA_SUCCESS)
      handle = nullptr;
  }
  ~CreatedContext() {
    using Destroy = driver::CUresult (*)(driver::CUcontext);
    if (auto destroy =
            reinterpret_cast<Destroy>(test_driver_entry("cuCtxDestroy_v2")))
      destroy(handle);
  }
  driver::CUcontext handle = nullptr;
};

driver::CUcontext current_context() {
  driver::CUcontext current = nullptr;
  driver::api().cuCtxGetCurrent(&current);
  return current;
}

driver::CUcontext owner_of(const DeviceBuffer<float> &b) {
  driver::CUcontext owner = nullptr;
  driver::api().cuPointerGetAttribute(&owner,
                                      driver::CU_POINTER_ATTRIBUTE_CONTEXT,
                                      reinterpret_cast<uintptr_t>(b.data()));
  return owner;
}

std::vector<float> plus_one(std::vector<float> v) {
  for (float &x : v)
    x += 1;
  return v;
}

TEST(GpuContexts, ACurrentContextOfTheProgramIsUsedAndStaysCurrent) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  // Several rounds: a new context may get a destroyed one's handle, and
  // the kernel must be loaded into the new one, not taken from a cache.
  for (int round = 0; round < 3; ++round) {
    std::thread([&] {
      CreatedContext mine;
      ASSERT_NE(mine.handle, nullptr);
      ASSERT_EQ(current_context(), mine.handle);
      const int n = 1000 + round;
      auto host = random_values<float>(n, -100, 100);
      {
        DeviceBuffer<float> x(host);
        EXPECT_EQ(owner_of(x), mine.handle);
        increment[{bl::cdiv(n, 256)}](x, n, 256);
        EXPECT_EQ(x.to_host(), plus_one(host));
      }
      EXPECT_EQ(current_context(), mine.handle);
    }).join();
  }
}

TEST(GpuContexts, BuffersOfAContextRunInItFromAThreadWithNoneCurrent) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  CreatedContext mine;
  ASSERT_NE(mine.handle, nullptr);
  const int n = 777;
  auto host = random_values<float>(n, -100, 100);
  {
    DeviceBuffer<float> x(host); // allocated in `mine`, current here
    driver::CUcontext popped = nullptr;
    driver::api().cuCtxPopCurrent(&popped);
    ASSERT_EQ(popped, mine.handle);
    std::thread([&] {
      ASSERT_EQ(current_context(), nullptr);
      increment[{bl::cdiv(n, 128)}](x, n, 128);
      EXPECT_EQ(x.to_host(), plus_one(host));
      EXPECT_EQ(current_context(), nullptr);
    }).join();
    EXPECT_EQ(owner_of(x), mine.handle);
    driver::api().cuCtxPushCurrent(mine.handle);
  }
}

TEST(GpuContexts, ThePrimaryContextServesThreadsWithNoneCurrent) {
  BLOCC_REQUIRE_GPU();
  std::thread([] {
    ASSERT_EQ(current_context(), nullptr);
    DeviceBuffer<float> x(std::vector<float>(300, 5.0f));
    driver::CUdevice device = 0;
    ASSERT_EQ(driver::api().cuDeviceGet(&device, 0), driver::CUDA_SUCCESS);
    driver::CUcontext primary = nullptr;
    ASSERT_EQ(driver::api().cuDevicePrimaryCtxRetain(&primary, device),
              driver::CUDA_SUCCESS);
    EXPECT_EQ(owner_of(x), primary);
    increment[{3}](x, 300, 128);
    EXPECT_EQ(x.to_host(), std::vector<float>(300, 6.0f));
    EXPECT_EQ(current_context(), nullptr);
  }).join();
}

} // namespace
