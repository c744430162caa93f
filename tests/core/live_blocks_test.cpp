// LiveBlocks (framework/memory/live_blocks.h): the allocators' table of live blocks keeps the records it is
// given, agrees with std::unordered_map through long random runs of inserts and erases (erasing shifts entries
// back, the part of an open-addressing table that is easy to get wrong), and once it has held as many blocks
// as a step needs makes no further heap allocations.
#include "framework/memory/live_blocks.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

namespace luong {
namespace {

struct Record {
  size_t block;
  int pool;
};

// std::allocator that counts the allocations made through it (the table's slot arrays).
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

using CountedBlocks = LiveBlocks<Record, CountingAllocator<Record>>;

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
  live.erase(&foreign);    // not live: nothing to forget
  live.erase(&memory[0]);  // erased already
  // Blocks recorded again carry their new record, not the old one's.
  for (int i = 0; i < 64; i += 2) live.insert(&memory[i], Record{7, -i});
  for (int i = 0; i < 64; i += 2) {
    const Record* r = live.find(&memory[i]);
    ASSERT_NE(r, nullptr) << i;
    EXPECT_EQ(r->block, 7u);
    EXPECT_EQ(r->pool, -i);
  }
}

TEST(LiveBlocks, AgreesWithAnUnorderedMapThroughRandomInsertsAndErases) {
  // Addresses as an allocator hands them out (64-byte aligned) from a small range, so runs of neighbouring
  // home slots form and wrap around the table's end; the live count swings up (growth) and down (erases
  // that shift runs back).
  std::vector<char> memory(64 * 4096);
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    LiveBlocks<Record> live;
    std::unordered_map<void*, Record> model;
    for (int op = 0; op < 200000; ++op) {
      void* block = &memory[64 * (rng() % 4096)];
      const bool grow_phase = (op / 20000) % 2 == 0;
      if (rng() % 100 < (grow_phase ? 70u : 30u)) {
        const Record r{static_cast<size_t>(op), static_cast<int>(rng() % 7)};
        live.insert(block, r);
        model[block] = r;
      } else {
        live.erase(block);
        model.erase(block);
      }
      if (op % 1000 == 0 || op > 199000) {
        ASSERT_EQ(live.size(), model.size()) << "seed " << seed << " op " << op;
        for (int i = 0; i < 4096; ++i) {
          void* b = &memory[64 * static_cast<size_t>(i)];
          const Record* r = live.find(b);
          const auto it = model.find(b);
          ASSERT_EQ(r != nullptr, it != model.end()) << "seed " << seed << " op " << op << " block " << i;
          if (r) {
            ASSERT_EQ(r->block, it->second.block) << "seed " << seed << " op " << op << " block " << i;
          }
        }
      }
    }
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
  // The first step grows the table, doubling from 64 slots to 1024 (at most half full): 5 arrays, not a
  // node per block.
  EXPECT_GE(g_allocations, 1);
  EXPECT_LE(g_allocations, 5);
  g_allocations = 0;
  for (int s = 1; s <= 5; ++s) step(100 * s);
  EXPECT_EQ(g_allocations, 0);
}

}  // namespace
}  // namespace luong
