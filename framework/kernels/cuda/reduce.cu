// Reductions; semantics are kernels/cpu/reduce.h's. sum_all and sum_squares are two-pass: a grid whose size
// depends on n alone writes one double partial per block, then one block adds the partials in a fixed tree.
// The same n therefore gives the same bits on every run (not the CPU's bits: the order differs).
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"
#include "framework/optim/clip_decision.h"

namespace luong::cuda {
namespace {

constexpr int kFinalThreads = 1024;
static_assert(kMaxReduceBlocks <= kFinalThreads, "the final pass reads one partial per thread");

struct Identity {
  __device__ double operator()(double v) const { return v; }
};
struct Square {
  __device__ double operator()(double v) const { return v * v; }
};

template <class T, class F>
__global__ void partial_sums_kernel(int64_t n, const T* x, F f, double* partials) {
  double acc = 0.0;
  for (int64_t i = global_index(); i < n; i += global_stride()) acc += f(static_cast<double>(x[i]));
  acc = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

__global__ void final_sum_kernel(int blocks, const double* partials, double* result) {
  const double v = static_cast<int>(threadIdx.x) < blocks ? partials[threadIdx.x] : 0.0;
  const double total = block_sum(v);
  if (threadIdx.x == 0) *result = total;
}

// The two passes into a device double (`result`); the caller holds ctx.scratch_mutex (the partials).
template <class T, class F>
void blocked_sum_into(DeviceContext& ctx, int64_t n, const T* x, F f, double* result) {
  if (n == 0) {
    LUONG_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), ctx.stream));  // all-zero bits: +0.0
    return;
  }
  const int64_t want = (n + 4 * kThreads - 1) / (4 * kThreads);  // about 4 elements per thread
  const int blocks = static_cast<int>(want < kMaxReduceBlocks ? want : kMaxReduceBlocks);
  partial_sums_kernel<<<blocks, kThreads, 0, ctx.stream>>>(n, x, f, ctx.partials);
  LUONG_CUDA_CHECK_LAUNCH("partial_sums_kernel");
  final_sum_kernel<<<1, kFinalThreads, 0, ctx.stream>>>(blocks, ctx.partials, result);
  LUONG_CUDA_CHECK_LAUNCH("final_sum_kernel");
}

template <class T, class F>
double blocked_sum(int64_t n, const T* x, F f) {
  if (n == 0) return 0.0;
  DeviceContext& ctx = context();
  std::lock_guard<std::mutex> lock(ctx.scratch_mutex);
  blocked_sum_into(ctx, n, x, f, ctx.result);
  read_result(ctx, sizeof(double));
  return *ctx.host_result;
}

template <class T>
__global__ void cast_result_kernel(const double* sum, T* out) {
  *out = static_cast<T>(*sum);
}

__global__ void clip_decide_kernel(double* stats, int64_t tokens, double clip_norm) {
  const ClipDecision d = decide_clip(stats[0], tokens, clip_norm);
  stats[0] = d.norm, stats[1] = d.finite ? 1.0 : 0.0, stats[2] = d.factor;
}

template <class T>
__global__ void scale_or_zero_kernel(int64_t n, const double* stats, T* x) {
  const bool finite = stats[1] != 0.0;
  const double factor = stats[2];
  if (finite && factor == 1.0) return;  // as the host path: no pass for a factor of 1
  const T alpha = static_cast<T>(factor);
  for (int64_t i = global_index(); i < n; i += global_stride()) x[i] = finite ? x[i] * alpha : T(0);
}

// Thread per (o, i): rows in order, the CPU's summation order.
template <class T>
__global__ void sum_dim_kernel(int64_t outer, int64_t len, int64_t inner, const T* x, T* out) {
  const int64_t total = outer * inner;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    const int64_t o = idx / inner, i = idx % inner;
    const T* src = x + o * len * inner + i;
    T acc = T(0);
    for (int64_t r = 0; r < len; ++r) acc += src[r * inner];
    out[idx] = acc;
  }
}

// inner == 1 and long rows: a block per row.
template <class T>
__global__ void sum_last_dim_kernel(int64_t len, const T* x, T* out) {
  const T* row = x + static_cast<int64_t>(blockIdx.x) * len;
  T acc = T(0);
  for (int64_t r = threadIdx.x; r < len; r += blockDim.x) acc += row[r];
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <class T>
__global__ void sum_dim_backward_kernel(int64_t outer, int64_t len, int64_t inner, const T* gy, T* gx) {
  const int64_t total = outer * len * inner;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    const int64_t o = idx / (len * inner), i = idx % inner;
    gx[idx] += gy[o * inner + i];
  }
}

template <class T>
__global__ void scale_kernel(int64_t n, T alpha, T* x) {
  for (int64_t i = global_index(); i < n; i += global_stride()) x[i] *= alpha;
}

// Any thread that sees a NaN or infinity raises the flag; all write the same value, so the race is benign.
template <class T>
__global__ void non_finite_kernel(int64_t n, const T* x, unsigned long long* flag) {
  for (int64_t i = global_index(); i < n; i += global_stride())
    if (!isfinite(x[i])) *flag = 1ull;
}

}  // namespace

template <class T>
double sum_all(int64_t n, const T* x) {
  return blocked_sum(n, x, Identity{});
}

template <class T>
double sum_squares(int64_t n, const T* x) {
  return blocked_sum(n, x, Square{});
}

template <class T>
void sum_dim(int64_t outer, int64_t len, int64_t inner, const T* x, T* out) {
  if (outer == 0 || inner == 0) return;
  if (inner == 1 && len >= 256 && outer < (int64_t{1} << 31)) {
    sum_last_dim_kernel<<<static_cast<unsigned>(outer), kThreads, 0, stream()>>>(len, x, out);
    LUONG_CUDA_CHECK_LAUNCH("sum_last_dim_kernel");
    return;
  }
  sum_dim_kernel<<<grid_for(outer * inner), kThreads, 0, stream()>>>(outer, len, inner, x, out);
  LUONG_CUDA_CHECK_LAUNCH("sum_dim_kernel");
}

template <class T>
void sum_dim_backward(int64_t outer, int64_t len, int64_t inner, const T* gy, T* gx) {
  const int64_t total = outer * len * inner;
  if (total == 0) return;
  sum_dim_backward_kernel<<<grid_for(total), kThreads, 0, stream()>>>(outer, len, inner, gy, gx);
  LUONG_CUDA_CHECK_LAUNCH("sum_dim_backward_kernel");
}

template <class T>
void scale(int64_t n, T alpha, T* x) {
  if (n == 0) return;
  scale_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, alpha, x);
  LUONG_CUDA_CHECK_LAUNCH("scale_kernel");
}

template <class T>
void sum_all_to(int64_t n, const T* x, T* out) {
  DeviceContext& ctx = context();
  std::lock_guard<std::mutex> lock(ctx.scratch_mutex);
  blocked_sum_into(ctx, n, x, Identity{}, ctx.result);
  cast_result_kernel<<<1, 1, 0, ctx.stream>>>(ctx.result, out);
  LUONG_CUDA_CHECK_LAUNCH("cast_result_kernel");
}

template <class T>
void sum_squares_to(int64_t n, const T* x, double* out) {
  DeviceContext& ctx = context();
  std::lock_guard<std::mutex> lock(ctx.scratch_mutex);
  blocked_sum_into(ctx, n, x, Square{}, out);
}

void clip_decide(double* stats, int64_t tokens, double clip_norm) {
  clip_decide_kernel<<<1, 1, 0, stream()>>>(stats, tokens, clip_norm);
  LUONG_CUDA_CHECK_LAUNCH("clip_decide_kernel");
}

template <class T>
void scale_or_zero(int64_t n, const double* stats, T* x) {
  if (n == 0) return;
  scale_or_zero_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, stats, x);
  LUONG_CUDA_CHECK_LAUNCH("scale_or_zero_kernel");
}

template <class T>
bool has_non_finite(int64_t n, const T* x) {
  if (n == 0) return false;
  DeviceContext& ctx = context();
  std::lock_guard<std::mutex> lock(ctx.scratch_mutex);
  auto* flag = reinterpret_cast<unsigned long long*>(ctx.result);
  LUONG_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(*flag), ctx.stream));
  non_finite_kernel<<<grid_for(n), kThreads, 0, ctx.stream>>>(n, x, flag);
  LUONG_CUDA_CHECK_LAUNCH("non_finite_kernel");
  read_result(ctx, sizeof(*flag));
  return *reinterpret_cast<const unsigned long long*>(ctx.host_result) != 0;
}

#define LUONG_INSTANTIATE(T)                                                      \
  template double sum_all<T>(int64_t, const T*);                                  \
  template double sum_squares<T>(int64_t, const T*);                              \
  template void sum_dim<T>(int64_t, int64_t, int64_t, const T*, T*);              \
  template void sum_dim_backward<T>(int64_t, int64_t, int64_t, const T*, T*);     \
  template void scale<T>(int64_t, T, T*);                                         \
  template void sum_all_to<T>(int64_t, const T*, T*);                             \
  template void sum_squares_to<T>(int64_t, const T*, double*);                    \
  template void scale_or_zero<T>(int64_t, const double*, T*);                     \
  template bool has_non_finite<T>(int64_t, const T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cuda
