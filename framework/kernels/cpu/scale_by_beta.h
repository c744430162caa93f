// C = beta C for a product with nothing to add (k = 0, or alpha = 0, where 0 * inf in A or B must not reach
// C): BLAS semantics, where beta 0 writes zeros without reading C (it may hold NaN). Shared by every CPU GEMM.
#pragma once
#include <cstdint>

namespace luong::cpu {

template <class T>
void scale_by_beta(int64_t count, T beta, T* c) {
  for (int64_t i = 0; i < count; ++i) c[i] = beta == T(0) ? T(0) : beta * c[i];
}

}  // namespace luong::cpu
