// Work split for the GEMM kernels on a shared host: units 0..count-1 are cut into one contiguous range per
// thread; each thread runs its own range front to back and then takes units from the back of the others'.
//
// Why: with a fixed half each, one of the two threads idled at the end of the large GEMMs for 5-6% of
// their time on this project's VM (measured per call: a neighbour or the hypervisor delays one vCPU, or the
// pool wakes late). Handing out every unit on demand instead costs locality (threads interleave over B) and
// measured 2-3% slower on a quiet host. Stealing from the back keeps the static split, and its locality,
// whenever no thread lags.
//
// Every unit runs exactly once. Callers make each unit write its own part of the output, summed in a fixed
// order, so which thread runs a unit never changes the result.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

namespace luong::cpu {

class StealingRanges {
 public:
  StealingRanges(int64_t count, int threads);
  // The next unit for thread `self` (0 <= self < threads): from its own range, else stolen; -1 when all are
  // taken.
  int64_t next(int self);

 private:
  // A range's front and back (exclusive) in one word, front in the high half, so a claim is one CAS.
  struct alignas(64) Range {
    std::atomic<uint64_t> bounds{0};
  };
  int threads_;
  std::unique_ptr<Range[]> ranges_;
};

}  // namespace luong::cpu
