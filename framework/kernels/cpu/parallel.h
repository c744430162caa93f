// OpenMP helpers. Work is split into fixed-size blocks independent of the thread count, and reductions
// combine block partials in block order, so every result is bitwise identical for any number of threads.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong::cpu {

// Below this many elements a loop runs on one thread: the fork/join costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;
// Block size for deterministic reductions.
constexpr int64_t kReduceBlock = 1 << 12;

void set_num_threads(int n);
int num_threads();

// Runs body(begin, end) over [0, n). When `worth_threads` (the caller's grain test) holds, more than one
// OpenMP thread is set and no parallel region is running, the range is split over a team exactly as
// `#pragma omp parallel for schedule(static)` splits a loop (one contiguous piece per thread, the first
// n % threads pieces one longer), so a result that depends on the split keeps its bits. Otherwise body
// runs once, on the calling thread, without entering OpenMP at all.
// Why not `#pragma omp parallel for if (...)`: with a false if-clause libgomp still starts a team of one
// and ends it with a futex wake, a system call: ~360 ns a call on the development VM against ~7 ns for the
// same 16-element loop inline (bench/engine_bench, "A loop below the parallel grain"), and the tiny model's
// training step (the engine's host-time proxy) made ~1,900 such calls (docs/PERFORMANCE.md, "OpenMP
// regions that never split").
// Bodies capture by value ([=]) what their loops read: through a by-reference capture every store the loop
// makes might change a captured scalar or pointer, and GCC then left the Adam update, the dropout mask and
// ReLU's backward scalar (tests/codegen/check_hot_loops.py caught the first two).
// The one-thread path runs a copy of the body, not the body itself: the body's address escapes to the OpenMP
// branch, so GCC takes every store of the inlined loop as a possible write to the captured values, reloads
// them each iteration and leaves the loop scalar. The OpenMP copy of the loop was vectorised (with run-time
// alias checks), which is all the vectoriser check looked at, while the inline copy ran scalar: Adam's
// update over 7.2M float32 values took 30.7 ms on one thread against 4.4 ms from the copy (Zen 4), a sixth of
// a single-threaded Multi30k step. The copy is a few pointers and scalars (asserted below).
template <class Body>
void parallel_ranges(int64_t n, bool worth_threads, const Body& body) {
  static_assert(std::is_trivially_copyable_v<Body>, "parallel_ranges bodies capture pointers and scalars only");
  if (n <= 0) return;
#ifdef _OPENMP
  if (worth_threads && n > 1 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
    {
      const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t piece = n / threads, longer = n % threads;
      const int64_t begin = t * piece + std::min(t, longer);
      const int64_t end = begin + piece + (t < longer ? 1 : 0);
      if (begin < end) body(begin, end);
    }
    return;
  }
#endif
  const Body local = body;  // see above: a copy whose address does not escape
  local(int64_t{0}, n);
}

// memset(dst, 0, bytes) and memcpy(dst, src, bytes), split over the threads from 1 MiB up (gradient buffers
// of the size of an embedding table: one thread reaches about half of the two cores' memory bandwidth).
void zero_bytes(void* dst, size_t bytes);
void copy_bytes(void* dst, const void* src, size_t bytes);

}  // namespace luong::cpu
