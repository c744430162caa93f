// The caching allocator's private pools (framework/memory/cuda_allocator.h), which keep a CUDA graph's
// blocks to the graph: on a host backend, every machine.
#include <gtest/gtest.h>

#include <thread>

#include "framework/memory/cuda_allocator.h"
#include "tests/cuda/fake_allocator_backend.h"
#include "tests/support/error_of.h"

namespace luong::testing {
namespace {

TEST(AllocatorPool, ACapturedBlockFreedAfterTheCaptureNeverServesAnEagerAllocation) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  const int pool = a.begin_private_pool();
  void* scratch = a.allocate(4096);  // a temporary of the captured step
  void* output = a.allocate(4096);   // the loss: alive after the capture
  a.deallocate(scratch, 4096);       // freed during the capture: back to the pool
  a.end_private_pool();
  void* eager = a.allocate(4096);  // the shared cache is empty: a new block
  EXPECT_NE(eager, scratch);
  EXPECT_NE(eager, output);
  a.deallocate(output, 4096);  // the graph's output dies after the capture: still the pool's
  void* eager2 = a.allocate(4096);
  EXPECT_NE(eager2, output);
  EXPECT_NE(eager2, scratch);
  EXPECT_EQ(fake.allocs, 4);
  a.deallocate(eager, 4096), a.deallocate(eager2, 4096);
  // A second capture into the same pool reuses its blocks.
  a.begin_private_pool(pool);
  void* again = a.allocate(4096);
  EXPECT_TRUE(again == scratch || again == output);
  a.deallocate(again, 4096);
  a.end_private_pool();
  EXPECT_EQ(fake.allocs, 4);
}

TEST(AllocatorPool, ABlockFreedDuringACaptureJoinsThePoolWhereverItCameFrom) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  void* before = a.allocate(2048);  // e.g. last step's loss, read by nothing captured, freed mid-capture
  a.begin_private_pool();
  a.deallocate(before, 2048);
  a.end_private_pool();
  void* eager = a.allocate(2048);
  EXPECT_NE(eager, before);  // a replay may still touch it: not handed out
  a.deallocate(eager, 2048);
}

TEST(AllocatorPool, ReleasingThePoolHandsItsBlocksToTheSharedCacheIncludingLaterFrees) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  const int pool = a.begin_private_pool();
  void* scratch = a.allocate(1024);
  void* output = a.allocate(1024);
  a.deallocate(scratch, 1024);
  a.end_private_pool();
  EXPECT_EQ(a.stats().cached, 1024);  // the pool's free block counts as cached
  a.empty_cache();                    // ... but is not the shared cache's to free
  EXPECT_EQ(fake.frees, 0);
  a.release_private_pool(pool);  // the graph is gone
  void* p = a.allocate(1024);
  EXPECT_EQ(p, scratch);
  a.deallocate(output, 1024);  // freed after the release: shared
  void* q = a.allocate(1024);
  EXPECT_EQ(q, output);
  EXPECT_EQ(fake.allocs, 2);
  a.deallocate(p, 1024), a.deallocate(q, 1024);
  a.empty_cache();
  EXPECT_EQ(fake.frees, 2);
  EXPECT_EQ(a.stats().cached, 0);
  EXPECT_NE(error_of([&] { a.begin_private_pool(pool); }).find("does not exist or was released"), std::string::npos);
}

TEST(AllocatorPool, OnlyTheCapturingThreadDrawsFromThePool) {
  FakeBackend fake;
  CachingAllocator a("fake", fake.backend());
  a.begin_private_pool();
  void* captured = a.allocate(512);
  a.deallocate(captured, 512);
  void* other = nullptr;
  std::thread([&] { other = a.allocate(512); }).join();  // a data loader uploading the next batch
  EXPECT_NE(other, captured);
  void* mine = a.allocate(512);
  EXPECT_EQ(mine, captured);
  a.deallocate(mine, 512);
  a.end_private_pool();
  a.deallocate(other, 512);
  EXPECT_NE(error_of([&] {
              a.begin_private_pool();
              a.begin_private_pool();
            }).find("already being captured into"),
            std::string::npos);
  a.end_private_pool();
}

TEST(AllocatorPool, OutOfMemoryDuringACaptureFailsWithoutReleasingTheCache) {
  FakeBackend fake;
  fake.budget = 4096;
  CachingAllocator a("fake", fake.backend());
  void* cached = a.allocate(4096);
  a.deallocate(cached, 4096);
  a.begin_private_pool();
  // Releasing the cache waits for the device, which a stream under capture cannot do.
  EXPECT_NE(error_of([&] { a.allocate(2048); }).find("out of memory"), std::string::npos);
  EXPECT_EQ(fake.syncs, 0);
  a.end_private_pool();
  void* p = a.allocate(2048);  // outside the capture the retry releases the cache
  EXPECT_EQ(fake.syncs, 1);
  a.deallocate(p, 2048);
}

}  // namespace
}  // namespace luong::testing
