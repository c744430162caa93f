#include "framework/kernels/cpu/lstm_cell.h"

#include <algorithm>
#include <type_traits>

#include "framework/kernels/cpu/wide_vectors.h"

#define LUONG_CPU_ISA x86_v3
#include "framework/kernels/cpu/lstm_cell_body.h"
#undef LUONG_CPU_ISA

namespace luong::cpu {

// The AVX-512 build (lstm_cell_avx512.cpp, float only).
namespace x86_v4 {
template <class T>
void lstm_cell_forward(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c, T* h, const T* bias);
template <class T>
void lstm_cell_backward(int64_t batch, int64_t hidden, const T* gates, const T* c_prev, const T* c, const T* dh,
                        const T* dc, T* dz, T* dc_prev, bool accumulate_dc_prev);
}  // namespace x86_v4

template <class T>
void lstm_cell_forward(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c, T* h,
                       const T* bias) {
  if constexpr (std::is_same_v<T, float>)
    if (wide_vectors()) return x86_v4::lstm_cell_forward(batch, hidden, z, c_prev, gates, c, h, bias);
  x86_v3::lstm_cell_forward(batch, hidden, z, c_prev, gates, c, h, bias);
}

template <class T>
void lstm_cell_backward(int64_t batch, int64_t hidden, const T* gates, const T* c_prev, const T* c, const T* dh,
                        const T* dc, T* dz, T* dc_prev, bool accumulate_dc_prev) {
  if constexpr (std::is_same_v<T, float>)
    if (wide_vectors())
      return x86_v4::lstm_cell_backward(batch, hidden, gates, c_prev, c, dh, dc, dz, dc_prev, accumulate_dc_prev);
  x86_v3::lstm_cell_backward(batch, hidden, gates, c_prev, c, dh, dc, dz, dc_prev, accumulate_dc_prev);
}

template <class T>
void lstm_carry_rows(int64_t rows, int64_t cols, const uint8_t* keep, const T* prev, T* x) {
  for (int64_t r = 0; r < rows; ++r) {
    if (keep[r]) continue;
    T* xr = x + r * cols;
    if (prev)
      std::copy_n(prev + r * cols, cols, xr);
    else
      std::fill_n(xr, cols, T(0));
  }
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

}  // namespace luong::cpu
