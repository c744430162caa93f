// The caching allocator behind CUDA devices: size classes, reuse of freed blocks without new system
// allocations, statistics, cache release and the out-of-memory retry. The caching logic runs on a host
// backend here (every build, every machine); the device tests run it on cudaMalloc and skip without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "framework/core/cuda_info.h"
#include "framework/memory/cuda_allocator.h"
#include "framework/tensor/tensor.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/fake_allocator_backend.h"

namespace luong::testing {
namespace {

TEST(CachingAllocator, SizeClassesRoundUpTo512BytesThenEighthsOfAPowerOfTwo) {
  EXPECT_EQ(CachingAllocator::size_class(1), 512u);
  EXPECT_EQ(CachingAllocator::size_class(512), 512u);
  EXPECT_EQ(CachingAllocator::size_class(513), 1024u);
  EXPECT_EQ(CachingAllocator::size_class(size_t{1} << 20), size_t{1} << 20);
  EXPECT_EQ(CachingAllocator::size_class((size_t{1} << 20) + 1), (size_t{1} << 20) + (size_t{1} << 17));
  EXPECT_EQ(CachingAllocator::size_class(size_t{3} << 20), size_t{3} << 20);
  for (size_t bytes : {size_t{777}, size_t{5} << 20, (size_t{1} << 30) + 12345}) {
    const size_t c = CachingAllocator::size_class(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_LE(static_cast<double>(c), 1.125 * static_cast<double>(bytes) + 512) << bytes;
  }
}

TEST(CachingAllocator, ReusesAFreedBlockOfTheSameClassWithoutASystemAllocation) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  void* p = a.allocate(1000);
  a.deallocate(p, 1000);
  void* q = a.allocate(900);  // same 1024-byte class
  EXPECT_EQ(q, p);
  EXPECT_EQ(fake.allocs, 1);
  void* r = a.allocate(5000);  // another class: a new block
  EXPECT_NE(r, p);
  EXPECT_EQ(fake.allocs, 2);
  a.deallocate(q, 900);
  a.deallocate(r, 5000);
  EXPECT_EQ(a.allocate(0), nullptr);
}

TEST(CachingAllocator, SteadyStateLoopMakesNoSystemAllocations) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  const std::vector<size_t> step_sizes = {4096, 100000, 3 << 20, 4096, 17};
  int after_first_step = 0;
  for (int step = 0; step < 5; ++step) {
    std::vector<void*> live;
    for (size_t s : step_sizes) live.push_back(a.allocate(s));
    for (size_t i = 0; i < live.size(); ++i) a.deallocate(live[i], step_sizes[i]);
    if (step == 0) after_first_step = fake.allocs;
  }
  EXPECT_EQ(fake.allocs, after_first_step);
  EXPECT_EQ(a.stats().num_allocs, after_first_step);
}

TEST(CachingAllocator, StatsTrackAllocatedCachedAndPeak) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  void* p = a.allocate(1000);
  void* q = a.allocate(3000);
  MemoryStats s = a.stats();
  EXPECT_EQ(s.allocated, 4000);
  EXPECT_EQ(s.cached, 0);
  EXPECT_EQ(s.peak, 4000);
  EXPECT_EQ(s.num_allocs, 2);
  a.deallocate(q, 3000);
  s = a.stats();
  EXPECT_EQ(s.allocated, 1000);
  EXPECT_EQ(s.cached, 3072);  // the size class of 3000
  EXPECT_EQ(s.peak, 4000);
  a.reset_peak();
  EXPECT_EQ(a.stats().peak, 1000);
  a.deallocate(p, 1000);
  EXPECT_EQ(a.stats().cached, 3072 + 1024);
}

TEST(CachingAllocator, EmptyCacheSynchronisesThenFreesEveryCachedBlock) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  void* p = a.allocate(1000);
  void* q = a.allocate(70000);
  a.deallocate(p, 1000);
  a.deallocate(q, 70000);
  a.empty_cache();
  EXPECT_EQ(fake.syncs, 1);
  EXPECT_EQ(fake.frees, 2);
  EXPECT_EQ(a.stats().cached, 0);
  EXPECT_EQ(fake.in_use, 0u);
}

TEST(CachingAllocator, OutOfMemoryReleasesTheCacheAndRetriesOnce) {
  FakeBackend fake;
  fake.budget = 1 << 20;
  CachingAllocator a("fake", fake.backend());
  void* p = a.allocate(600 * 1024);
  a.deallocate(p, 600 * 1024);  // cached: the budget has no room for another 600 KiB block of a new class
  void* q = a.allocate(700 * 1024);
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(fake.frees, 1);
  EXPECT_EQ(a.stats().cached, 0);
  try {
    a.allocate(900 * 1024);
    FAIL() << "allocation beyond the budget should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory on fake allocating 921600 bytes"), std::string::npos)
        << e.what();
  }
  a.deallocate(q, 700 * 1024);
}

TEST(CachingAllocator, FreeingAForeignPointerOrWithTheWrongSizeThrows) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  int local = 0;
  EXPECT_THROW(a.deallocate(&local, 4), Error);
  void* p = a.allocate(100);
  try {
    a.deallocate(p, 200);
    FAIL() << "a size mismatch should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("allocated as 100 bytes"), std::string::npos) << e.what();
  }
  a.deallocate(p, 100);
}

TEST(CudaAllocator, ABadDeviceIndexNamesTheDevice) {
  const int n = cuda_device_count();
  const std::string name = Device::cuda(n).name();
  try {
    allocator_for(Device::cuda(n));
    FAIL() << "allocator for " << name << " should throw with " << n << " device(s)";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(CudaAllocator, DeviceBlocksAreReusedAndTheSteadyStateMakesNoCudaMalloc) {
  LUONG_REQUIRE_CUDA();
  Allocator& alloc = allocator_for(Device::cuda(0));
  void* first = nullptr;
  {
    Tensor t = Tensor::empty({1000}, DType::f32, Device::cuda(0));
    first = t.raw();
  }
  Tensor again = Tensor::empty({999}, DType::f32, Device::cuda(0));  // same 4 KiB class
  EXPECT_EQ(again.raw(), first);
  int64_t allocs_after_warmup = 0;
  for (int step = 0; step < 4; ++step) {
    std::vector<Tensor> live;
    for (int64_t n : {int64_t{128}, int64_t{4000}, int64_t{1} << 20, int64_t{77}})
      live.push_back(Tensor::zeros({n}, DType::f32, Device::cuda(0)));
    if (step == 0) allocs_after_warmup = alloc.stats().num_allocs;
  }
  EXPECT_EQ(alloc.stats().num_allocs, allocs_after_warmup);
  EXPECT_GE(alloc.stats().peak, alloc.stats().allocated);
}

}  // namespace
}  // namespace luong::testing
