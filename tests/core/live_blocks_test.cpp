// LiveBlocks (framework/memory/live_blocks.h): the allocators' table of live blocks keeps the records it is
// given and, once it has held as many blocks as a step needs, makes no further heap allocations.
#include "framework/memory/live_blocks.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace luong {
namespace {

struct Record {
  size_t block;
  int pool;
};

// std::allocator that counts the allocations made through it (the map's nodes and bucket arrays).
int g_allocations = 0;
template <class T>
struct CountingAllocator {
  using value_type = T;
  CountingAllocator() = default;
  template <class U>
  CountingAllocator(const CountingAllocator<U>&) {}
  T* allocate(size_t n) {
    ++g_allocations;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const CountingAllocator<U>&) const {
    return true;
  }
};

using CountedBlocks = LiveBlocks<Record, CountingAllocator<std::pair<void* const, Record>>>;

TEST(LiveBlocks, KeepsEachBlocksRecordUntilItIsErasedAndKnowsNoOtherPointer) {
  LiveBlocks<Record> live;
  std::vector<char> memory(64);
  for (int i = 0; i < 64; ++i) live.insert(&memory[i], Record{static_cast<size_t>(i) * 512, i % 3});
  for (int i = 0; i < 64; i += 2) live.erase(&memory[i]);
  for (int i = 0; i < 64; ++i) {
    const Record* r = live.find(&memory[i]);
    if (i % 2 == 0) {
      EXPECT_EQ(r, nullptr) << i;
      continue;
    }
    ASSERT_NE(r, nullptr) << i;
    EXPECT_EQ(r->block, static_cast<size_t>(i) * 512);
    EXPECT_EQ(r->pool, i % 3);
  }
  int foreign = 0;
  EXPECT_EQ(live.find(&foreign), nullptr);
  live.erase(&foreign);    // not live: nothing to forget, and nothing for the inserts below to reuse
  live.erase(&memory[0]);  // erased already
  // Recycled nodes carry the new block's record, not the old one's.
  for (int i = 0; i < 64; i += 2) live.insert(&memory[i], Record{7, -i});
  for (int i = 0; i < 64; i += 2) {
    const Record* r = live.find(&memory[i]);
    ASSERT_NE(r, nullptr) << i;
    EXPECT_EQ(r->block, 7u);
    EXPECT_EQ(r->pool, -i);
  }
}

TEST(LiveBlocks, ASteadyStateOfInsertsAndErasesMakesNoHeapAllocation) {
  CountedBlocks live;
  std::vector<char> memory(1000);
  auto step = [&](int offset) {  // a "step": 300 blocks live at once, at addresses that move from step to step
    for (int i = 0; i < 300; ++i) live.insert(&memory[offset + i], Record{static_cast<size_t>(i), 0});
    for (int i = 0; i < 300; ++i) live.erase(&memory[offset + i]);
  };
  g_allocations = 0;
  step(0);
  EXPECT_GE(g_allocations, 300);  // the first step builds the table: a node per block at least
  g_allocations = 0;
  for (int s = 1; s <= 5; ++s) step(100 * s);
  EXPECT_EQ(g_allocations, 0);
}

}  // namespace
}  // namespace luong
