#include "framework/kernels/cpu/stealing_ranges.h"

#include "framework/core/error.h"

namespace luong::cpu {
namespace {

uint64_t pack(uint64_t front, uint64_t back) { return front << 32 | back; }
uint64_t front_of(uint64_t bounds) { return bounds >> 32; }
uint64_t back_of(uint64_t bounds) { return bounds & 0xFFFFFFFFu; }

}  // namespace

StealingRanges::StealingRanges(int64_t count, int threads) : threads_(threads), ranges_(new Range[threads]) {
  LUONG_CHECK(threads >= 1 && count >= 0 && count < (int64_t{1} << 32), "StealingRanges: ", count, " units over ",
              threads, " threads");
  for (int t = 0; t < threads; ++t)
    ranges_[t].bounds.store(
        pack(static_cast<uint64_t>(count * t / threads), static_cast<uint64_t>(count * (t + 1) / threads)),
        std::memory_order_relaxed);
}

int64_t StealingRanges::next(int self) {
  // Own range: the front.
  std::atomic<uint64_t>& own = ranges_[self].bounds;
  for (uint64_t b = own.load(std::memory_order_relaxed); front_of(b) < back_of(b);)
    if (own.compare_exchange_weak(b, pack(front_of(b) + 1, back_of(b)), std::memory_order_relaxed))
      return static_cast<int64_t>(front_of(b));
  // Others' ranges: the back, so their owners keep running forward through what they have.
  for (int k = 1; k < threads_; ++k) {
    std::atomic<uint64_t>& other = ranges_[(self + k) % threads_].bounds;
    for (uint64_t b = other.load(std::memory_order_relaxed); front_of(b) < back_of(b);)
      if (other.compare_exchange_weak(b, pack(front_of(b), back_of(b) - 1), std::memory_order_relaxed))
        return static_cast<int64_t>(back_of(b) - 1);
  }
  return -1;
}

}  // namespace luong::cpu
