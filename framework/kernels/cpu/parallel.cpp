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

// Runs op(offset, length) over [0, bytes): from kSplitBytes up, one contiguous run of whole cache lines per
// thread (the last line may be short), through parallel_ranges like every other split loop.
template <class Op>
void split_bytes(size_t bytes, Op op) {
  const int64_t lines = static_cast<int64_t>((bytes + 63) / 64);
  parallel_ranges(lines, bytes >= kSplitBytes, [=](int64_t first, int64_t last) {
    const size_t begin = static_cast<size_t>(first) * 64, end = std::min(bytes, static_cast<size_t>(last) * 64);
    op(begin, end - begin);
  });
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
