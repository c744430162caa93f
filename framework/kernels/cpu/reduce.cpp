#include "framework/kernels/cpu/reduce.h"

#include <atomic>
#include <cmath>
#include <vector>

#include "framework/kernels/cpu/parallel.h"
#include "framework/optim/clip_decision.h"

namespace luong::cpu {
namespace {

// Sums f(x[i]) over fixed blocks of kReduceBlock elements in parallel, then adds the block partials in
// block order: the same bits whatever the thread count. Within a block, element i goes to lane i % kLanes
// and the lanes are added in lane order at the end: still a fixed order, but the lanes are independent
// dependency chains the compiler turns into vector adds (one serial chain of double adds ran at one add
// per 4 cycles, and the gradient norm over every parameter was 2% of a training step).
template <class T, class F>
double blocked_sum(int64_t n, const T* x, F f) {
  constexpr int64_t kLanes = 32;
  static_assert(kReduceBlock % kLanes == 0, "lanes must tile a block");
  const int64_t blocks = (n + kReduceBlock - 1) / kReduceBlock;
  std::vector<double> partials(static_cast<size_t>(blocks), 0.0);
  double* partial = partials.data();
  parallel_ranges(blocks, n > kParallelGrain, [=](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      const int64_t lo = b * kReduceBlock, hi = lo + kReduceBlock < n ? lo + kReduceBlock : n;
      double lane[kLanes] = {};
      int64_t i = lo;
      for (; i + kLanes <= hi; i += kLanes)
        // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
        for (int64_t l = 0; l < kLanes; ++l) lane[l] += f(static_cast<double>(x[i + l]));
      double s = 0.0;
      for (; i < hi; ++i) s += f(static_cast<double>(x[i]));
      for (int64_t l = 0; l < kLanes; ++l) s += lane[l];
      partial[b] = s;
    }
  });
  double total = 0.0;
  for (double p : partials) total += p;
  return total;
}

}  // namespace

template <class T>
double sum_all(int64_t n, const T* x) {
  return blocked_sum(n, x, [](double v) { return v; });
}

template <class T>
void sum_all_to(int64_t n, const T* x, T* out) {
  *out = static_cast<T>(sum_all(n, x));
}

template <class T>
double sum_squares(int64_t n, const T* x) {
  return blocked_sum(n, x, [](double v) { return v * v; });
}

template <class T>
void sum_squares_to(int64_t n, const T* x, double* out) {
  *out = sum_squares(n, x);
}

template <class T>
void sum_dim(int64_t outer, int64_t len, int64_t inner, const T* x, T* out) {
  parallel_ranges(outer, outer * len * inner > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) {
      T* dst = out + o * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = T(0);
      for (int64_t r = 0; r < len; ++r) {
        const T* src = x + (o * len + r) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += src[i];
      }
    }
  });
}

template <class T>
void sum_dim_backward(int64_t outer, int64_t len, int64_t inner, const T* gy, T* gx) {
  parallel_ranges(outer, outer * len * inner > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o)
      for (int64_t r = 0; r < len; ++r) {
        T* dst = gx + (o * len + r) * inner;
        const T* src = gy + o * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += src[i];
      }
  });
}

template <class T>
void scale(int64_t n, T alpha, T* x) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) x[i] *= alpha;
  });
}

void clip_decide(double* stats, int64_t tokens, double clip_norm) {
  const ClipDecision d = decide_clip(stats[0], tokens, clip_norm);
  stats[0] = d.norm, stats[1] = d.finite ? 1.0 : 0.0, stats[2] = d.factor;
}

template <class T>
void scale_or_zero(int64_t n, const double* stats, T* x) {
  if (stats[1] == 0.0) {
    parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
#pragma omp simd
      for (int64_t i = lo; i < hi; ++i) x[i] = T(0);
    });
    return;
  }
  if (stats[2] != 1.0) scale(n, static_cast<T>(stats[2]), x);  // as average_and_clip_: no pass for 1
}

template <class T>
bool has_non_finite(int64_t n, const T* x) {
  std::atomic<bool> bad{false};
  parallel_ranges(n, n > kParallelGrain, [=, &bad](int64_t lo, int64_t hi) {
    int mine = 0;  // an int, not a bool: the OR then vectorises
    for (int64_t i = lo; i < hi; ++i) mine |= !std::isfinite(x[i]);
    if (mine) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load(std::memory_order_relaxed);
}

#define LUONG_INSTANTIATE(T)                                                  \
  template double sum_all<T>(int64_t, const T*);                              \
  template double sum_squares<T>(int64_t, const T*);                          \
  template void sum_all_to<T>(int64_t, const T*, T*);                         \
  template void sum_squares_to<T>(int64_t, const T*, double*);                \
  template void scale_or_zero<T>(int64_t, const double*, T*);                 \
  template void sum_dim<T>(int64_t, int64_t, int64_t, const T*, T*);          \
  template void sum_dim_backward<T>(int64_t, int64_t, int64_t, const T*, T*); \
  template void scale<T>(int64_t, T, T*);                                     \
  template bool has_non_finite<T>(int64_t, const T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cpu
