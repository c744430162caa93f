#include "framework/ops/tensor_math.h"

#include <cmath>

#include "framework/core/capture_guard.h"
#include "framework/kernels/cpu/gemm.h"
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
  check_no_host_read("sum_squares");
  return dispatch_float(t.dtype(), "sum_squares", [&](auto tag) {
    using T = decltype(tag);
    return LUONG_KERNEL(t.device(), sum_squares<T>, t.numel(), t.data<T>());
  });
}

double sum_all(const Tensor& t) {
  check_no_host_read("sum_all");
  return dispatch_float(t.dtype(), "sum_all", [&](auto tag) {
    using T = decltype(tag);
    return LUONG_KERNEL(t.device(), sum_all<T>, t.numel(), t.data<T>());
  });
}

bool has_non_finite(const Tensor& t) {
  check_no_host_read("has_non_finite");
  return dispatch_float(t.dtype(), "has_non_finite", [&](auto tag) {
    using T = decltype(tag);
    return LUONG_KERNEL(t.device(), has_non_finite<T>, t.numel(), t.data<T>());
  });
}

Tensor sum_all_scalar(const Tensor& t) {
  Tensor out = Tensor::empty({}, t.dtype(), t.device());
  dispatch_float(t.dtype(), "sum_all_scalar", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(t.device(), sum_all_to<T>, t.numel(), t.data<T>(), out.data<T>());
  });
  return out;
}

void add_matmul_tn_(Tensor& c, const Tensor& a, const Tensor& g, bool overwrite) {
  LUONG_CHECK(c.dim() == 2 && c.size(0) > 0 && c.size(1) > 0, "add_matmul_tn_: target ", c.describe(),
              " is not a non-empty matrix");
  const int64_t k = c.size(0), n = c.size(1), m = a.numel() / k;
  LUONG_CHECK(a.numel() == m * k && g.numel() == m * n && a.dtype() == c.dtype() && g.dtype() == c.dtype(),
              "add_matmul_tn_: ", a.describe(), "ᵀ times ", g.describe(), " into ", c.describe());
  check_same_device("add_matmul_tn_", c, a);
  check_same_device("add_matmul_tn_", c, g);
  if (m == 0) {
    if (overwrite) c.zero_();
    return;
  }
  dispatch_float(c.dtype(), "add_matmul_tn_", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(c.device(), gemm<T>, true, false, k, n, m, T(1), a.data<T>(), g.data<T>(), T(overwrite ? 0 : 1),
                 c.data<T>());
  });
}

namespace {

// The rows of each part, one after the other, in one (Σ m, cols) buffer: one kernel call for all parts (on
// CUDA a launch per 32 parts instead of a cudaMemcpyAsync per part).
Tensor stack_rows(const std::vector<Tensor>& parts, int64_t rows, int64_t cols) {
  Tensor out = Tensor::empty({rows, cols}, parts.front().dtype(), parts.front().device());
  std::vector<const void*> src;
  std::vector<int64_t> bytes;
  src.reserve(parts.size()), bytes.reserve(parts.size());
  for (const Tensor& p : parts) src.push_back(p.raw()), bytes.push_back(static_cast<int64_t>(p.nbytes()));
  LUONG_KERNEL(out.device(), concat_parts, static_cast<int64_t>(parts.size()), src.data(), bytes.data(), out.raw());
  return out;
}

}  // namespace

void add_matmul_tn_stacked_(Tensor& c, const std::vector<Tensor>& a_parts, const std::vector<Tensor>& g_parts,
                            bool overwrite) {
  LUONG_CHECK(!a_parts.empty() && a_parts.size() == g_parts.size(), "add_matmul_tn_stacked_: ", a_parts.size(),
              " left and ", g_parts.size(), " right parts");
  if (a_parts.size() == 1) return add_matmul_tn_(c, a_parts.front(), g_parts.front(), overwrite);
  LUONG_CHECK(c.dim() == 2 && c.size(0) > 0 && c.size(1) > 0, "add_matmul_tn_stacked_: target ", c.describe(),
              " is not a non-empty matrix");
  const int64_t k = c.size(0), n = c.size(1);
  int64_t rows = 0;
  for (size_t i = 0; i < a_parts.size(); ++i) {
    const Tensor &a = a_parts[i], &g = g_parts[i];
    const int64_t m = a.numel() / k;
    LUONG_CHECK(a.numel() == m * k && g.numel() == m * n && a.dtype() == c.dtype() && g.dtype() == c.dtype(),
                "add_matmul_tn_stacked_: part ", i, ": ", a.describe(), "ᵀ times ", g.describe(), " into ",
                c.describe());
    check_same_device("add_matmul_tn_stacked_", c, a);
    check_same_device("add_matmul_tn_stacked_", c, g);
    rows += m;
  }
  if (c.device().is_cpu() && c.dtype() == DType::f32) {  // read in place where gemm() uses luong's kernel
    std::vector<cpu::GemmSegment> pieces;
    pieces.reserve(a_parts.size());
    for (size_t i = 0; i < a_parts.size(); ++i)
      pieces.push_back({a_parts[i].data<float>(), g_parts[i].data<float>(), a_parts[i].numel() / k});
    if (cpu::gemm_tn_pieces(k, n, rows, pieces, overwrite ? 0.0f : 1.0f, c.data<float>())) return;
  }
  // One GEMM with K = Σ m. The stacked copies cost one pass over the operands, far less than the GEMM
  // efficiency they buy at m = batch.
  add_matmul_tn_(c, stack_rows(a_parts, rows, k), stack_rows(g_parts, rows, n), overwrite);
}

double global_norm(const Tensor& flat) { return std::sqrt(sum_squares(flat)); }


}  // namespace luong
