#include "framework/kernels/cpu/elementwise.h"

#include <algorithm>
#include <cmath>

#include "framework/core/philox.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/philox_blocks.h"
#include "framework/kernels/cpu/vec_math.h"

namespace luong::cpu {

template <class T>
void unary_forward(UnaryKind k, int64_t n, const T* x, T* y) {
  switch (k) {
    case UnaryKind::tanh:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = act_tanh(x[i]);
      });
      break;
    case UnaryKind::sigmoid:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = act_sigmoid(x[i]);
      });
      break;
    case UnaryKind::relu:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
      });
      break;
    case UnaryKind::exp:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = std::exp(x[i]);
      });
      break;
    case UnaryKind::log:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = std::log(x[i]);
      });
      break;
    case UnaryKind::neg:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) y[i] = -x[i];
      });
      break;
    case UnaryKind::sqrt:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = std::sqrt(x[i]);
      });
      break;
  }
}

template <class T>
void unary_backward(UnaryKind k, int64_t n, const T* x, const T* y, const T* gy, T* gx) {
  switch (k) {
    case UnaryKind::tanh:  // d tanh = 1 - y^2
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) gx[i] += gy[i] * (T(1) - y[i] * y[i]);
      });
      break;
    case UnaryKind::sigmoid:  // d sigmoid = y (1 - y)
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) gx[i] += gy[i] * y[i] * (T(1) - y[i]);
      });
      break;
    case UnaryKind::relu:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) gx[i] += x[i] > T(0) ? gy[i] : T(0);
      });
      break;
    case UnaryKind::exp:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) gx[i] += gy[i] * y[i];
      });
      break;
    case UnaryKind::log:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) gx[i] += gy[i] / x[i];
      });
      break;
    case UnaryKind::neg:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) gx[i] -= gy[i];
      });
      break;
    case UnaryKind::sqrt:
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) gx[i] += gy[i] / (T(2) * y[i]);
      });
      break;
  }
}

template <class T>
void binary_forward(BinaryKind k, int64_t n, int64_t na, const T* a, int64_t nb, const T* b, T* out) {
  auto run = [&](auto op) {
    if (na == n && nb == n) {
      parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) out[i] = op(a[i], b[i]);
      });
      return;
    }
    // One operand repeats with period p over rows of the other.
    const int64_t p = na == n ? nb : na;
    const int64_t rows = p ? n / p : 0;
    parallel_ranges(rows, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* ar = na == n ? a + r * p : a;
        const T* br = nb == n ? b + r * p : b;
        T* o = out + r * p;
#pragma omp simd
        for (int64_t j = 0; j < p; ++j) o[j] = op(ar[j], br[j]);
      }
    });
  };
  switch (k) {
    case BinaryKind::add: run([](T x, T y) { return x + y; }); break;
    case BinaryKind::sub: run([](T x, T y) { return x - y; }); break;
    case BinaryKind::mul: run([](T x, T y) { return x * y; }); break;
    case BinaryKind::div: run([](T x, T y) { return x / y; }); break;
  }
}

template <class T>
void sum_rows_accumulate(int64_t rows, int64_t cols, const T* x, T* out) {
  // Parallel over column blocks; each column sums its rows in order, so the result is independent of the
  // blocks and of the thread count. Wide blocks read each row's piece in order with the block's sums in L1:
  // 1024 columns ran the generator's 256 x 8000 bias gradient in 76.5 us against 98.5 with 64-column blocks.
  // A quarter of the columns at most, so an LSTM's 4H = 1024 still splits over threads.
  const int64_t block = std::clamp<int64_t>(cols / 4, 64, 1024);
  const int64_t blocks = (cols + block - 1) / block;
  parallel_ranges(blocks, rows * cols > kParallelGrain && cols >= 2 * block, [=](int64_t lo, int64_t hi) {
    for (int64_t bj = lo; bj < hi; ++bj) {
      const int64_t j0 = bj * block, j1 = j0 + block < cols ? j0 + block : cols;
      for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * cols;
        // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
        for (int64_t j = j0; j < j1; ++j) out[j] += xr[j];
      }
    }
  });
}

template <class T>
void affine(int64_t n, const T* x, T alpha, T beta, T* y) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) y[i] = alpha * x[i] + beta;
  });
}

template <class T>
void axpy(int64_t n, T alpha, const T* x, T* y) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) y[i] += alpha * x[i];
  });
}

template <class T>
void mul(int64_t n, const T* x, const T* m, T* y) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) y[i] = x[i] * m[i];
  });
}

template <class T>
void masked_fill(int64_t n, const T* x, int64_t n_mask, const uint8_t* mask, T value, T* y) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = mask[i % n_mask] ? value : x[i];
  });
}

template <class T>
void window_mask(int64_t rows, int64_t cols, const T* centers, const uint8_t* src_mask, double radius, uint8_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const double center = static_cast<double>(centers[r]);
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      out[i] = src_mask[i] != 0 && std::abs(static_cast<double>(c) - center) <= radius ? 1 : 0;
    }
  }
}

template <class T>
void masked_fill_backward(int64_t n, const T* gy, int64_t n_mask, const uint8_t* mask, T* gx) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      if (!mask[i % n_mask]) gx[i] += gy[i];
  });
}

template <class T>
void dropout_mask(int64_t n, float p, uint64_t seed, uint64_t offset, T* m) {
  const T scale = T(1) / (T(1) - static_cast<T>(p));
  // Element i uses lane i % 4 of Philox block offset + i / 4, exactly as philox_uniform_at (and the CUDA
  // kernel). A tile's 64 blocks are made in vector lanes (philox_blocks), then turned into the mask by a loop
  // that vectorises; the tile's 1 KB of words stays in L1.
  constexpr int64_t kTileBlocks = 64;
  const int64_t blocks = (n + 3) / 4;
  const int64_t tiles = (blocks + kTileBlocks - 1) / kTileBlocks;
  parallel_ranges(tiles, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      alignas(32) uint32_t words[4 * kTileBlocks];
      const int64_t b0 = t * kTileBlocks, tile_blocks = std::min(kTileBlocks, blocks - b0);
      philox_blocks(seed, offset + static_cast<uint64_t>(b0), tile_blocks, words);
      const int64_t len = std::min(4 * tile_blocks, n - 4 * b0);
      T* __restrict out = m + 4 * b0;
      // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
      for (int64_t i = 0; i < len; ++i) out[i] = philox_uniform(words[i]) >= p ? scale : T(0);
    }
  });
}

#define LUONG_INSTANTIATE(T)                                                                       \
  template void unary_forward<T>(UnaryKind, int64_t, const T*, T*);                                \
  template void unary_backward<T>(UnaryKind, int64_t, const T*, const T*, const T*, T*);           \
  template void binary_forward<T>(BinaryKind, int64_t, int64_t, const T*, int64_t, const T*, T*);  \
  template void sum_rows_accumulate<T>(int64_t, int64_t, const T*, T*);                            \
  template void affine<T>(int64_t, const T*, T, T, T*);                                            \
  template void axpy<T>(int64_t, T, const T*, T*);                                                 \
  template void mul<T>(int64_t, const T*, const T*, T*);                                           \
  template void masked_fill<T>(int64_t, const T*, int64_t, const uint8_t*, T, T*);                 \
  template void masked_fill_backward<T>(int64_t, const T*, int64_t, const uint8_t*, T*);           \
  template void window_mask<T>(int64_t, int64_t, const T*, const uint8_t*, double, uint8_t*);      \
  template void dropout_mask<T>(int64_t, float, uint64_t, uint64_t, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cpu
