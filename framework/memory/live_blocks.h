// The live-block table of a caching allocator: block address -> what the allocator recorded for it.
//
// An open-addressing table: linear probing over a power-of-two number of slots, at most half of them full, the
// home slot taken from the high bits of the address times a 64-bit odd constant (Fibonacci hashing), and an
// erase that shifts the rest of its run back instead of leaving a tombstone, so lookups never slow down.
// Why not std::unordered_map: it made a heap node per insert (recycling node handles removed that, but not the
// rest), divided by a prime bucket count on every lookup and followed node pointers. With two lookups per
// tensor, the CPU allocator (that map, and its free lists then in a std::map walked entry by entry) took 11% of
// the tiny model's step, 7% after this table and a class-indexed free list (perf; docs/PERFORMANCE.md). Here a
// lookup is one multiply and, nearly always, one or two slots of one cache line, and nothing is allocated once
// the table has grown to a step's number of live blocks (it never shrinks).
// Not thread-safe: the allocators call it under their own lock. Alloc is the slots' allocator (tests count its
// calls); it is rebound to the slot type.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "framework/core/error.h"

namespace luong {

template <class Info, class Alloc = std::allocator<Info>>
class LiveBlocks {
 public:
  // Records a block (a live block's record is replaced).
  void insert(void* block, const Info& info) {
    LUONG_CHECK(block != nullptr, "LiveBlocks: a null block cannot be recorded");
    if (2 * (count_ + 1) > slots_.size()) grow();
    place(block, info);
  }

  // The record of a live block, or nullptr when the allocator did not hand it out (or it was freed).
  const Info* find(void* block) const {
    if (count_ == 0 || block == nullptr) return nullptr;
    for (size_t i = home(block);; i = (i + 1) & mask_) {
      if (slots_[i].block == block) return &slots_[i].info;
      if (slots_[i].block == nullptr) return nullptr;
    }
  }

  // Forgets a block; a block that is not live is left alone.
  void erase(void* block) {
    if (count_ == 0 || block == nullptr) return;
    size_t hole = home(block);
    while (slots_[hole].block != block) {
      if (slots_[hole].block == nullptr) return;
      hole = (hole + 1) & mask_;
    }
    // Entries further along the run move into the hole when it lies on their probe path (between their home
    // slot and where they sit), so every entry stays reachable from its home without tombstones.
    for (size_t j = (hole + 1) & mask_; slots_[j].block != nullptr; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].block);
      if (((hole - h) & mask_) < ((j - h) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].block = nullptr;
    --count_;
  }

  size_t size() const { return count_; }

 private:
  struct Slot {
    void* block = nullptr;  // nullptr: empty
    Info info{};
  };
  using SlotAlloc = typename std::allocator_traits<Alloc>::template rebind_alloc<Slot>;

  size_t home(void* block) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(block) * uint64_t{0x9E3779B97F4A7C15}) >> shift_);
  }

  // Into a table with room: the block's slot, or the first empty one of its run.
  void place(void* block, const Info& info) {
    size_t i = home(block);
    while (slots_[i].block != nullptr && slots_[i].block != block) i = (i + 1) & mask_;
    if (slots_[i].block == nullptr) ++count_;
    slots_[i].block = block;
    slots_[i].info = info;
  }

  void grow() {
    std::vector<Slot, SlotAlloc> old;
    old.swap(slots_);
    const size_t capacity = old.empty() ? 64 : 2 * old.size();
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    count_ = 0;
    for (const Slot& s : old)
      if (s.block != nullptr) place(s.block, s.info);
  }

  std::vector<Slot, SlotAlloc> slots_;
  size_t count_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;  // 64 - log2(number of slots)
};

}  // namespace luong
