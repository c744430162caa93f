#include "framework/kernels/cpu/cross_entropy_inplace.h"

#include <type_traits>

#include "framework/kernels/cpu/wide_vectors.h"

#define LUONG_CPU_ISA x86_v3
#include "framework/kernels/cpu/cross_entropy_body.h"
#undef LUONG_CPU_ISA

namespace luong::cpu {

// The AVX-512 build (cross_entropy_inplace_avx512.cpp, float only).
namespace x86_v4 {
template <class T>
void cross_entropy_inplace(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target, int64_t ignore_index,
                           T eps, T* row_loss, bool grad);
}  // namespace x86_v4

template <class T>
void cross_entropy_inplace(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target,
                           int64_t ignore_index, T eps, T* row_loss, bool grad) {
  if constexpr (std::is_same_v<T, float>)
    if (wide_vectors())
      return x86_v4::cross_entropy_inplace(rows, cols, z, bias, target, ignore_index, eps, row_loss, grad);
  x86_v3::cross_entropy_inplace(rows, cols, z, bias, target, ignore_index, eps, row_loss, grad);
}

template void cross_entropy_inplace<float>(int64_t, int64_t, float*, const float*, const int64_t*, int64_t, float,
                                           float*, bool);
template void cross_entropy_inplace<double>(int64_t, int64_t, double*, const double*, const int64_t*, int64_t, double,
                                            double*, bool);

}  // namespace luong::cpu
