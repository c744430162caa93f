#include "framework/kernels/cpu/gather.h"

#include <cstring>
#include <vector>

#include "framework/kernels/cpu/parallel.h"

namespace luong::cpu {

template <class T>
int64_t embedding_forward(int64_t n, int64_t dim, int64_t rows, const int64_t* ids, const T* table, T* out) {
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= rows) return i;
  parallel_ranges(n, n * dim > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      std::memcpy(out + i * dim, table + ids[i] * dim, sizeof(T) * static_cast<size_t>(dim));
  });
  return -1;
}

template <class T>
void gather(int64_t n, const int64_t* index, const T* src, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = src[index[i]];
}

template <class T>
void embedding_backward(int64_t n, int64_t dim, const int64_t* ids, int64_t padding_idx, const T* gout, T* gtable) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] == padding_idx) continue;
    T* dst = gtable + ids[i] * dim;
    const T* src = gout + i * dim;
    for (int64_t j = 0; j < dim; ++j) dst[j] += src[j];
  }
}

template <class T>
void copy_block(int64_t outer, int64_t inner, int64_t len, const T* src, int64_t src_len, int64_t src_start, T* dst,
                int64_t dst_len, int64_t dst_start, bool accumulate) {
  const int64_t chunk = len * inner;
  parallel_ranges(outer, outer * chunk > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) {
      const T* s = src + (o * src_len + src_start) * inner;
      T* d = dst + (o * dst_len + dst_start) * inner;
      if (accumulate) {
        for (int64_t i = 0; i < chunk; ++i) d[i] += s[i];
      } else {
        std::memcpy(d, s, sizeof(T) * static_cast<size_t>(chunk));
      }
    }
  });
}

void concat_parts(int64_t count, const void* const* src, const int64_t* bytes, void* dst) {
  std::vector<int64_t> begin(static_cast<size_t>(count) + 1, 0);
  for (int64_t i = 0; i < count; ++i) begin[static_cast<size_t>(i) + 1] = begin[static_cast<size_t>(i)] + bytes[i];
  char* out = static_cast<char*>(dst);
  // One parallel region over the parts (a copy_bytes per part opened one each).
  const int64_t* at = begin.data();
  parallel_ranges(count, count > 1 && begin.back() > kParallelGrain * 4, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      if (bytes[i] > 0) std::memcpy(out + at[i], src[i], static_cast<size_t>(bytes[i]));
  });
}

template <class T>
void transpose(int64_t outer, int64_t a, int64_t mid, int64_t b, int64_t inner, const T* src, T* dst, bool accumulate) {
  parallel_ranges(outer, outer * a * mid * b * inner > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o)
      for (int64_t i = 0; i < a; ++i)
        for (int64_t m = 0; m < mid; ++m)
          for (int64_t j = 0; j < b; ++j) {
            const T* s = src + (((o * a + i) * mid + m) * b + j) * inner;
            T* d = dst + (((o * b + j) * mid + m) * a + i) * inner;
            for (int64_t k = 0; k < inner; ++k) d[k] = accumulate ? d[k] + s[k] : s[k];
          }
  });
}

#define LUONG_INSTANTIATE(T)                                                                                      \
  template int64_t embedding_forward<T>(int64_t, int64_t, int64_t, const int64_t*, const T*, T*);                 \
  template void embedding_backward<T>(int64_t, int64_t, const int64_t*, int64_t, const T*, T*);                   \
  template void gather<T>(int64_t, const int64_t*, const T*, T*);                                                 \
  template void copy_block<T>(int64_t, int64_t, int64_t, const T*, int64_t, int64_t, T*, int64_t, int64_t, bool); \
  template void transpose<T>(int64_t, int64_t, int64_t, int64_t, int64_t, const T*, T*, bool);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
LUONG_INSTANTIATE(int64_t)
#undef LUONG_INSTANTIATE

}  // namespace luong::cpu
