#include "framework/kernels/cpu/parallel.h"

#include <algorithm>
#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong::cpu {

void set_num_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

int num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

namespace {

constexpr size_t kSplitBytes = size_t{1} << 20;

// Runs op(offset, length) over [0, bytes) in one contiguous, cache-line-aligned piece per thread.
template <class Op>
void split_bytes(size_t bytes, Op op) {
#ifdef _OPENMP
  if (bytes >= kSplitBytes && !omp_in_parallel() && omp_get_max_threads() > 1) {
#pragma omp parallel
    {
      const size_t threads = static_cast<size_t>(omp_get_num_threads()), t = static_cast<size_t>(omp_get_thread_num());
      const size_t piece = (bytes / threads + 63) / 64 * 64, begin = std::min(bytes, t * piece);
      const size_t end = std::min(bytes, begin + piece);
      if (end > begin) op(begin, end - begin);
    }
    return;
  }
#endif
  op(size_t{0}, bytes);
}

}  // namespace

void zero_bytes(void* dst, size_t bytes) {
  char* d = static_cast<char*>(dst);
  split_bytes(bytes, [&](size_t at, size_t n) { std::memset(d + at, 0, n); });
}

void copy_bytes(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  split_bytes(bytes, [&](size_t at, size_t n) { std::memcpy(d + at, s + at, n); });
}

}  // namespace luong::cpu
