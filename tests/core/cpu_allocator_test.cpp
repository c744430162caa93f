// The CPU caching allocator (framework/memory/cpu_allocator.cpp): size classes, best fit among cached blocks up
// to twice the request, the bound on the cache (largest blocks given back first), and the error for a pointer
// it did not hand out. Sizes are in the megabytes, which no other allocation of this process asks for, and each
// test empties the cache first; the assertions are on differences of the allocator's statistics.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/memory/allocator.h"

namespace luong {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

Allocator& cpu() { return allocator_for(Device::cpu()); }

// Bytes a request is charged: its size class (with nothing cached, which best fit could hand out instead).
size_t charged(size_t bytes) {
  Allocator& a = cpu();
  a.empty_cache();
  const int64_t before = a.stats().allocated;
  void* p = a.allocate(bytes);
  const int64_t after = a.stats().allocated;
  a.deallocate(p, bytes);
  return static_cast<size_t>(after - before);
}

TEST(CpuAllocator, ChargesEachRequestItsSizeClass) {
  EXPECT_EQ(charged(1), 64u);
  EXPECT_EQ(charged(64), 64u);
  EXPECT_EQ(charged(65), 128u);
  EXPECT_EQ(charged(4096), 4096u);
  EXPECT_EQ(charged(4097), 5120u);  // four classes per power of two above 4 KiB
  EXPECT_EQ(charged(8192), 8192u);
  EXPECT_EQ(charged(8193), 10240u);
  EXPECT_EQ(charged(3 * kMiB), 3 * kMiB);
  EXPECT_EQ(charged(3 * kMiB + 1), 3 * kMiB + kMiB / 2);
  EXPECT_EQ(charged(64 * kMiB + 1), 80 * kMiB);
  for (size_t bytes = 1; bytes < 64 * kMiB; bytes = bytes * 3 + 1) {
    const size_t c = charged(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_LE(c, bytes <= 4096 ? bytes + 63 : bytes + bytes / 4) << bytes;
    EXPECT_EQ(c % 64, 0u) << bytes;
  }
}

TEST(CpuAllocator, ReusesTheSmallestCachedBlockUpToTwiceTheRequest) {
  Allocator& a = cpu();
  a.empty_cache();
  void* big = a.allocate(12 * kMiB);
  void* mid = a.allocate(7 * kMiB);
  void* small = a.allocate(3 * kMiB);
  a.deallocate(big, 12 * kMiB);
  a.deallocate(mid, 7 * kMiB);
  a.deallocate(small, 3 * kMiB);
  const MemoryStats s0 = a.stats();
  EXPECT_EQ(s0.cached, static_cast<int64_t>(22 * kMiB));

  // 5 MiB: the 7 MiB block is the smallest that fits (3 MiB does not) and within twice the request.
  void* p = a.allocate(5 * kMiB);
  EXPECT_EQ(p, mid);
  EXPECT_EQ(a.stats().num_allocs, s0.num_allocs);
  EXPECT_EQ(a.stats().cached, static_cast<int64_t>(15 * kMiB));
  // 5 MiB again: the 12 MiB block is more than twice the class (5 MiB), so a new block.
  void* q = a.allocate(5 * kMiB);
  EXPECT_NE(q, big);
  EXPECT_EQ(a.stats().num_allocs, s0.num_allocs + 1);
  // 6.5 MiB: 12 is within twice its class (7 MiB).
  void* r = a.allocate(6 * kMiB + kMiB / 2);
  EXPECT_EQ(r, big);
  EXPECT_EQ(a.stats().cached, static_cast<int64_t>(3 * kMiB));
  EXPECT_EQ(a.allocate(3 * kMiB), small);
  a.deallocate(small, 3 * kMiB);
  a.deallocate(p, 5 * kMiB);
  a.deallocate(q, 5 * kMiB);
  a.deallocate(r, 6 * kMiB + kMiB / 2);
  a.empty_cache();
  EXPECT_EQ(a.stats().cached, 0);
}

TEST(CpuAllocator, KeepsAtMost512MiBCachedGivingBackTheLargestBlocksFirst) {
  Allocator& a = cpu();
  a.empty_cache();
  // Never touched, so this costs address space, not memory.
  std::vector<void*> blocks;
  const std::vector<size_t> sizes{160 * kMiB, 96 * kMiB, 160 * kMiB, 128 * kMiB, 96 * kMiB};  // 640 MiB
  for (size_t s : sizes) blocks.push_back(a.allocate(s));
  for (size_t i = 0; i < blocks.size(); ++i) a.deallocate(blocks[i], sizes[i]);
  // Freeing the fourth block (128) took the total to 544 MiB: one 160 MiB block went back; then 480 MiB.
  EXPECT_EQ(a.stats().cached, static_cast<int64_t>(480 * kMiB));
  // What is left: one 160, the 128, two 96. Both 96 MiB requests and the 160 are served from the cache.
  const int64_t allocs = a.stats().num_allocs;
  void* x = a.allocate(96 * kMiB);
  void* y = a.allocate(96 * kMiB);
  void* z = a.allocate(160 * kMiB);
  void* w = a.allocate(128 * kMiB);
  EXPECT_EQ(a.stats().num_allocs, allocs);
  EXPECT_EQ(a.stats().cached, 0);
  for (void* p : {x, y, z, w}) a.deallocate(p, 0);
  a.empty_cache();
}

TEST(CpuAllocator, RefusesToFreeAPointerItDidNotHandOut) {
  Allocator& a = cpu();
  int on_stack = 0;
  EXPECT_THROW(
      {
        try {
          a.deallocate(&on_stack, sizeof(on_stack));
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("freeing a pointer it did not allocate"), std::string::npos);
          throw;
        }
      },
      Error);
  void* p = a.allocate(100);
  a.deallocate(p, 100);
  EXPECT_THROW(a.deallocate(p, 100), Error);  // freed twice
}

TEST(CpuAllocator, NamesAnImpossibleRequest) {
  try {
    cpu().allocate(~size_t{0});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of CPU memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace luong
