#include "framework/kernels/cpu/lstm_cell.h"

#include <cmath>

#include "framework/kernels/cpu/parallel.h"

namespace luong::cpu {

template <class T>
void lstm_cell_forward(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c, T* tanh_c, T* h) {
#pragma omp parallel for schedule(static) if (batch * hidden > kParallelGrain / 4)
  for (int64_t b = 0; b < batch; ++b) {
    const T* zb = z + b * 4 * hidden;
    T* gb = gates + b * 4 * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      const T i = T(1) / (T(1) + std::exp(-zb[j]));
      const T f = T(1) / (T(1) + std::exp(-zb[hidden + j]));
      const T g = std::tanh(zb[2 * hidden + j]);
      const T o = T(1) / (T(1) + std::exp(-zb[3 * hidden + j]));
      gb[j] = i, gb[hidden + j] = f, gb[2 * hidden + j] = g, gb[3 * hidden + j] = o;
      const int64_t k = b * hidden + j;
      const T cv = f * c_prev[k] + i * g;
      const T tc = std::tanh(cv);
      c[k] = cv;
      tanh_c[k] = tc;
      h[k] = o * tc;
    }
  }
}

template <class T>
void lstm_cell_backward(int64_t batch, int64_t hidden, const T* gates, const T* c_prev, const T* tanh_c, const T* dh,
                        const T* dc, T* dz, T* dc_prev) {
#pragma omp parallel for schedule(static) if (batch * hidden > kParallelGrain / 4)
  for (int64_t b = 0; b < batch; ++b) {
    const T* gb = gates + b * 4 * hidden;
    T* dzb = dz + b * 4 * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      const int64_t k = b * hidden + j;
      const T i = gb[j], f = gb[hidden + j], g = gb[2 * hidden + j], o = gb[3 * hidden + j];
      const T tc = tanh_c[k];
      const T dhk = dh ? dh[k] : T(0);
      // dc total = incoming dc + dh * o * (1 - tanh(c)^2)
      const T dct = (dc ? dc[k] : T(0)) + dhk * o * (T(1) - tc * tc);
      dzb[j] = dct * g * i * (T(1) - i);
      dzb[hidden + j] = dct * c_prev[k] * f * (T(1) - f);
      dzb[2 * hidden + j] = dct * i * (T(1) - g * g);
      dzb[3 * hidden + j] = dhk * tc * o * (T(1) - o);
      if (dc_prev) dc_prev[k] += dct * f;
    }
  }
}

template void lstm_cell_forward<float>(int64_t, int64_t, const float*, const float*, float*, float*, float*, float*);
template void lstm_cell_forward<double>(int64_t, int64_t, const double*, const double*, double*, double*, double*,
                                        double*);
template void lstm_cell_backward<float>(int64_t, int64_t, const float*, const float*, const float*, const float*,
                                        const float*, float*, float*);
template void lstm_cell_backward<double>(int64_t, int64_t, const double*, const double*, const double*, const double*,
                                         const double*, double*, double*);

}  // namespace luong::cpu
