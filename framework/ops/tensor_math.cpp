#include "framework/ops/tensor_math.h"

#include <cmath>

#include "framework/kernels/dispatch.h"

namespace luong {

void add_(Tensor& dst, const Tensor& src, double alpha) {
  LUONG_CHECK(dst.numel() == src.numel() && dst.dtype() == src.dtype(), "add_: ", src.describe(), " into ",
              dst.describe());
  check_same_device("add_", dst, src);
  dispatch_float(dst.dtype(), "add_", [&](auto t) {
    using T = decltype(t);
    LUONG_KERNEL(dst.device(), axpy<T>, dst.numel(), static_cast<T>(alpha), src.data<T>(), dst.data<T>());
  });
}

void scale_(Tensor& t, double alpha) {
  dispatch_float(t.dtype(), "scale_", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(t.device(), scale<T>, t.numel(), static_cast<T>(alpha), t.data<T>());
  });
}

double sum_squares(const Tensor& t) {
  return dispatch_float(t.dtype(), "sum_squares", [&](auto tag) {
    using T = decltype(tag);
    return LUONG_KERNEL(t.device(), sum_squares<T>, t.numel(), t.data<T>());
  });
}

double sum_all(const Tensor& t) {
  return dispatch_float(t.dtype(), "sum_all", [&](auto tag) {
    using T = decltype(tag);
    return LUONG_KERNEL(t.device(), sum_all<T>, t.numel(), t.data<T>());
  });
}

bool has_non_finite(const Tensor& t) {
  return dispatch_float(t.dtype(), "has_non_finite", [&](auto tag) {
    using T = decltype(tag);
    return LUONG_KERNEL(t.device(), has_non_finite<T>, t.numel(), t.data<T>());
  });
}

void add_matmul_tn_(Tensor& c, const Tensor& a, const Tensor& g) {
  LUONG_CHECK(c.dim() == 2 && c.size(0) > 0 && c.size(1) > 0, "add_matmul_tn_: target ", c.describe(),
              " is not a non-empty matrix");
  const int64_t k = c.size(0), n = c.size(1), m = a.numel() / k;
  LUONG_CHECK(a.numel() == m * k && g.numel() == m * n && a.dtype() == c.dtype() && g.dtype() == c.dtype(),
              "add_matmul_tn_: ", a.describe(), "ᵀ times ", g.describe(), " into ", c.describe());
  check_same_device("add_matmul_tn_", c, a);
  check_same_device("add_matmul_tn_", c, g);
  if (m == 0) return;
  dispatch_float(c.dtype(), "add_matmul_tn_", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(c.device(), gemm<T>, true, false, k, n, m, T(1), a.data<T>(), g.data<T>(), T(1), c.data<T>());
  });
}

double global_norm(const Tensor& flat) { return std::sqrt(sum_squares(flat)); }


}  // namespace luong
