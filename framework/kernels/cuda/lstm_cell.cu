// The pointwise half of the fused LSTM cell; semantics are kernels/cpu/lstm_cell.h's (gate order i, f, g, o).
// A thread per (batch, hidden) element reads its four pre-activations and writes everything after them in
// one pass: 12 values of traffic per element forward instead of one kernel per gate.
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

template <class T>
__global__ void lstm_cell_forward_kernel(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c,
                                         T* h, const T* bias) {
  const int64_t total = batch * hidden;
  for (int64_t k = global_index(); k < total; k += global_stride()) {
    const int64_t b = k / hidden, j = k % hidden;
    const T* zb = z + b * 4 * hidden;
    T* gb = gates + b * 4 * hidden;
    // With a bias, z + b as the CPU kernel adds it; without, z itself (no + 0, which would turn -0 into +0).
    auto pre = [&](int64_t q) { return bias ? zb[q] + bias[q] : zb[q]; };
    const T i = dev_sigmoid(pre(j));
    const T f = dev_sigmoid(pre(hidden + j));
    const T g = dev_tanh(pre(2 * hidden + j));
    const T o = dev_sigmoid(pre(3 * hidden + j));
    gb[j] = i, gb[hidden + j] = f, gb[2 * hidden + j] = g, gb[3 * hidden + j] = o;
    const T cv = f * c_prev[k] + i * g;
    const T tc = dev_tanh(cv);
    c[k] = cv;
    h[k] = o * tc;
  }
}

// dh and dc may be null (zero); dz is overwritten, dc_prev accumulated or overwritten as 0 + x (may be null).
// tanh(c) is recomputed from the step's c with the forward's function (kernels/cpu/lstm_cell.h).
template <class T>
__global__ void lstm_cell_backward_kernel(int64_t batch, int64_t hidden, const T* gates, const T* c_prev,
                                          const T* c, const T* dh, const T* dc, T* dz, T* dc_prev, bool accumulate) {
  const int64_t total = batch * hidden;
  for (int64_t k = global_index(); k < total; k += global_stride()) {
    const int64_t b = k / hidden, j = k % hidden;
    const T* gb = gates + b * 4 * hidden;
    T* dzb = dz + b * 4 * hidden;
    const T i = gb[j], f = gb[hidden + j], g = gb[2 * hidden + j], o = gb[3 * hidden + j];
    const T tc = dev_tanh(c[k]);
    const T dhk = dh ? dh[k] : T(0);
    const T dct = (dc ? dc[k] : T(0)) + dhk * o * (T(1) - tc * tc);  // dc total through h = o tanh(c)
    dzb[j] = dct * g * i * (T(1) - i);
    dzb[hidden + j] = dct * c_prev[k] * f * (T(1) - f);
    dzb[2 * hidden + j] = dct * i * (T(1) - g * g);
    dzb[3 * hidden + j] = dhk * tc * o * (T(1) - o);
    if (dc_prev) dc_prev[k] = (accumulate ? dc_prev[k] : T(0)) + dct * f;
  }
}

template <class T>
__global__ void lstm_carry_rows_kernel(int64_t rows, int64_t cols, const uint8_t* keep, const T* prev, T* x) {
  const int64_t total = rows * cols;
  for (int64_t k = global_index(); k < total; k += global_stride())
    if (!keep[k / cols]) x[k] = prev ? prev[k] : T(0);
}

}  // namespace

template <class T>
void lstm_cell_forward(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c, T* h,
                       const T* bias) {
  if (batch * hidden == 0) return;
  lstm_cell_forward_kernel<<<grid_for(batch * hidden), kThreads, 0, stream()>>>(batch, hidden, z, c_prev, gates, c,
                                                                               h, bias);
  LUONG_CUDA_CHECK_LAUNCH("lstm_cell_forward_kernel");
}

template <class T>
void lstm_cell_backward(int64_t batch, int64_t hidden, const T* gates, const T* c_prev, const T* c, const T* dh,
                        const T* dc, T* dz, T* dc_prev, bool accumulate_dc_prev) {
  if (batch * hidden == 0) return;
  lstm_cell_backward_kernel<<<grid_for(batch * hidden), kThreads, 0, stream()>>>(batch, hidden, gates, c_prev, c,
                                                                                dh, dc, dz, dc_prev,
                                                                                accumulate_dc_prev);
  LUONG_CUDA_CHECK_LAUNCH("lstm_cell_backward_kernel");
}

template <class T>
void lstm_carry_rows(int64_t rows, int64_t cols, const uint8_t* keep, const T* prev, T* x) {
  if (rows * cols == 0) return;
  lstm_carry_rows_kernel<<<grid_for(rows * cols), kThreads, 0, stream()>>>(rows, cols, keep, prev, x);
  LUONG_CUDA_CHECK_LAUNCH("lstm_carry_rows_kernel");
}

template void lstm_carry_rows<float>(int64_t, int64_t, const uint8_t*, const float*, float*);
template void lstm_carry_rows<double>(int64_t, int64_t, const uint8_t*, const double*, double*);
template void lstm_cell_forward<float>(int64_t, int64_t, const float*, const float*, float*, float*, float*,
                                        const float*);
template void lstm_cell_forward<double>(int64_t, int64_t, const double*, const double*, double*, double*, double*,
                                         const double*);
template void lstm_cell_backward<float>(int64_t, int64_t, const float*, const float*, const float*, const float*,
                                        const float*, float*, float*, bool);
template void lstm_cell_backward<double>(int64_t, int64_t, const double*, const double*, const double*, const double*,
                                         const double*, double*, double*, bool);

}  // namespace luong::cuda
