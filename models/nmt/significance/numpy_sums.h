// NumPy's sum and mean of a 1-D array (np.add.reduce: pairwise summation in blocks of 128 unrolled by 8, in the
// array's own type), so that float32 means and the differences taken from them round as sacreBLEU's do.
#pragma once
#include <cstddef>

namespace luong::significance {

template <typename T>
T numpy_sum(const T* a, size_t n) {
  if (n < 8) {
    T res = 0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t half = n / 2;
  half -= half % 8;
  return numpy_sum(a, half) + numpy_sum(a + half, n - half);
}

// array.mean(): the sum divided by the count, in T.
template <typename T>
T numpy_mean(const T* a, size_t n) {
  return numpy_sum(a, n) / static_cast<T>(n);
}

}  // namespace luong::significance
