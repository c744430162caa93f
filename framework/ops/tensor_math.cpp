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

bool stacked_gemm_reads_parts_in_place(const Tensor& c, int64_t rows) {
  return c.device().is_cpu() && c.dtype() == DType::f32 && c.dim() == 2 &&
         cpu::gemm_tn_reads_pieces(c.size(0), c.size(1), rows);
}

Tensor stack_rows(const std::vector<Tensor>& parts, int64_t cols) {
  LUONG_CHECK(!parts.empty() && cols > 0, "stack_rows: ", parts.size(), " parts of ", cols, " columns");
  int64_t rows = 0;
  for (const Tensor& p : parts) {
    LUONG_CHECK(p.numel() % cols == 0 && p.dtype() == parts.front().dtype(), "stack_rows: part ", p.describe(),
                " is not rows of ", cols, " ", parts.front().dtype());
    check_same_device("stack_rows", parts.front(), p);
    rows += p.numel() / cols;
  }
  Tensor out = Tensor::empty({rows, cols}, parts.front().dtype(), parts.front().device());
  std::vector<const void*> src;
  std::vector<int64_t> bytes;
  src.reserve(parts.size()), bytes.reserve(parts.size());
  for (const Tensor& p : parts) src.push_back(p.raw()), bytes.push_back(static_cast<int64_t>(p.nbytes()));
  LUONG_KERNEL(out.device(), concat_parts, static_cast<int64_t>(parts.size()), src.data(), bytes.data(), out.raw());
  return out;
}

void add_column_sums_(Tensor& c, const Tensor& g, bool overwrite) {
  const int64_t n = c.numel();
  LUONG_CHECK(n > 0 && g.numel() % n == 0 && g.dtype() == c.dtype(), "add_column_sums_: ", g.describe(),
              " is not rows of ", c.describe());
  check_same_device("add_column_sums_", c, g);
  if (overwrite) c.zero_();
  dispatch_float(c.dtype(), "add_column_sums_", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(c.device(), sum_rows_accumulate<T>, g.numel() / n, n, g.data<T>(), c.data<T>());
  });
}

void add_matmul_tn_stacked_(Tensor& c, const std::vector<Tensor>& a_parts, const std::vector<Tensor>& g_parts,
                            bool overwrite, const Tensor* g_stacked) {
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
  if (g_stacked)
    LUONG_CHECK(g_stacked->numel() == rows * n && g_stacked->dtype() == c.dtype(), "add_matmul_tn_stacked_: stacked ",
                g_stacked->describe(), " for ", rows, " rows of ", n);
  if (stacked_gemm_reads_parts_in_place(c, rows)) {  // read in place where gemm() uses luong's kernel
    std::vector<cpu::GemmSegment> pieces;
    pieces.reserve(a_parts.size());
    int64_t row = 0;
    for (size_t i = 0; i < a_parts.size(); ++i) {
      const int64_t m = a_parts[i].numel() / k;
      const float* g = g_stacked ? g_stacked->data<float>() + row * n : g_parts[i].data<float>();
      pieces.push_back({a_parts[i].data<float>(), g, m});
      row += m;
    }
    cpu::gemm_tn_pieces(k, n, rows, pieces, overwrite ? 0.0f : 1.0f, c.data<float>());
    return;
  }
  // One GEMM with K = Σ m. The stacked copies cost one pass over the operands, far less than the GEMM
  // efficiency they buy at m = batch.
  add_matmul_tn_(c, stack_rows(a_parts, k), g_stacked ? *g_stacked : stack_rows(g_parts, n), overwrite);
}

double global_norm(const Tensor& flat) { return std::sqrt(sum_squares(flat)); }


}  // namespace luong
