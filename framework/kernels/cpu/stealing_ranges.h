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

#ifdef _OPENMP
#include <omp.h>
#endif

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

// How many units to cut `items` (a GEMM's panels or column blocks) into: pieces of at most max_per_unit,
// rounded up to a multiple of the thread count, so every thread's own run starts the same size (units then
// differ by at most one item).
inline int64_t balanced_units(int64_t items, int64_t max_per_unit, int threads) {
  return ((items + max_per_unit - 1) / max_per_unit + threads - 1) / threads * threads;
}

// Runs fn(first, last) once for each unit's items [items * u / units, items * (u + 1) / units) on `threads`
// OpenMP threads: each starts on its own contiguous run, then steals from the back of the others'.
template <class Fn>
void run_stealing(int64_t items, int64_t units, int threads, Fn fn) {
  StealingRanges work(units, threads);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
  {
    const int self = omp_get_thread_num();
#else
  {
    const int self = 0;
#endif
    for (int64_t u = work.next(self); u >= 0; u = work.next(self)) fn(items * u / units, items * (u + 1) / units);
  }
}

}  // namespace luong::cpu
