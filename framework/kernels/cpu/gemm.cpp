#include "framework/kernels/cpu/gemm.h"

#include <cblas.h>

#include <type_traits>
#include <vector>

#include "framework/core/precision.h"
#include "framework/kernels/cpu/bf16_gemm.h"
#include "framework/kernels/cpu/gemm_profile.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/scale_by_beta.h"

namespace luong::cpu {
namespace {

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
          float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(ta ? m : k), b,
              static_cast<int>(tb ? k : n), beta, c, static_cast<int>(n));
}

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(ta ? m : k), b,
              static_cast<int>(tb ? k : n), beta, c, static_cast<int>(n));
}

// Reduced-precision float32 GEMMs (train.precision = tf32 | bf16; framework/core/precision.h), emulated:
// A and B are rounded (round to nearest even) into scratch float32 buffers, then sgemm runs on them. A
// product of two bf16 values (8-bit significands) or two tf32 values (11-bit significands) is exact in
// float32, so this computes what tensor cores compute: rounded inputs, float32 accumulation (summation
// order aside). It exists for tests and for CPU/GPU agreement, not for speed: the rounding pass and the
// scratch copies make it slower than plain sgemm. With AMX or AVX512-BF16, bf16 runs on the CPU's bf16
// instructions instead (bf16_gemm.h). The scratch is per thread and grows to the largest
// operand seen, then stays (no allocation per call in steady state).
void round_into(std::vector<float>& out, const float* x, int64_t count, int mantissa_bits) {
  if (out.size() < static_cast<size_t>(count)) out.resize(static_cast<size_t>(count));
  float* y = out.data();
  parallel_ranges(count, count >= kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = round_mantissa_rne(x[i], mantissa_bits);
  });
}

int reduced_mantissa_bits(GemmPrecision p) { return p == GemmPrecision::bf16 ? 7 : 10; }

// Returns true when it ran the GEMM(s) in reduced precision, false for fp32 (the caller runs plain sgemm).
bool reduced_gemm(bool ta, bool tb, int64_t batch, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c) {
  const GemmPrecision p = gemm_precision();
  if (p == GemmPrecision::fp32) return false;
  if (bf16_gemms_native()) {  // the same arithmetic on the CPU's bf16 instructions
    for (int64_t i = 0; i < batch; ++i)
      bf16_gemm(ta, tb, m, n, k, alpha, a + i * m * k, b + i * k * n, beta, c + i * m * n);
    return true;
  }
  thread_local std::vector<float> ra, rb;
  const int bits = reduced_mantissa_bits(p);
  round_into(ra, a, batch * m * k, bits);
  round_into(rb, b, batch * k * n, bits);
  for (int64_t i = 0; i < batch; ++i)
    blas(ta, tb, m, n, k, alpha, ra.data() + i * m * k, rb.data() + i * k * n, beta, c + i * m * n);
  return true;
}

// The one routing rule for float32 products (fp32 precision; reduced precision goes to reduced_gemm): luong's
// blocked kernel where it pays, OpenBLAS otherwise.
bool on_blocked_kernel(int64_t m, int64_t n, int64_t k) {
  return gemm_precision() == GemmPrecision::fp32 && blocked_gemm_pays(m, n, k);
}

// The kernel gemm() and gemm_batched() send a product to, by the rules they apply, for the GEMM profile.
template <class T>
const char* route_name(bool batched, int64_t m, int64_t n, int64_t k) {
  if (!gemm_profile_enabled()) return nullptr;
  if constexpr (!std::is_same_v<T, float>) return "OpenBLAS, float64";
  const GemmPrecision p = gemm_precision();
  if (p != GemmPrecision::fp32) {
    if (bf16_gemms_native()) return bf16_route_name(false);
    return p == GemmPrecision::bf16 ? "OpenBLAS, bf16 emulated" : "OpenBLAS, tf32 emulated";
  }
  return !batched && on_blocked_kernel(m, n, k) ? "luong blocked" : "OpenBLAS";
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_by_beta(m * n, beta, c);  // make beta explicit
  GemmProfileScope timing(route_name<T>(false, m, n, k), trans_a, trans_b, m, n, k);
  if constexpr (std::is_same_v<T, float>) {  // float64 GEMMs are always full precision
    if (reduced_gemm(trans_a, trans_b, 1, m, n, k, alpha, a, b, beta, c)) return;
    if (on_blocked_kernel(m, n, k)) return blocked_gemm(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
  }
  blas(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  const T* b, T beta, T* c) {
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) return scale_by_beta(batch * m * n, beta, c);
  // One row per batched call, its shape the whole batch's: m rows per item times the items.
  GemmProfileScope timing(route_name<T>(true, m, n, k), trans_a, trans_b, batch * m, n, k);
  if constexpr (std::is_same_v<T, float>) {
    if (reduced_gemm(trans_a, trans_b, batch, m, n, k, alpha, a, b, beta, c)) return;  // rounds all items once
  }
  for (int64_t i = 0; i < batch; ++i)
    blas(trans_a, trans_b, m, n, k, alpha, a + i * m * k, b + i * k * n, beta, c + i * m * n);
}

bool gemm_tn_reads_pieces(int64_t m, int64_t n, int64_t k) { return on_blocked_kernel(m, n, k); }

bool gemm_tn_pieces(int64_t m, int64_t n, int64_t k, const std::vector<GemmSegment>& pieces, float beta, float* c) {
  if (!gemm_tn_reads_pieces(m, n, k)) return false;
  GemmProfileScope timing("luong blocked, pieces in place", true, false, m, n, k);
  blocked_gemm_tn_segments(m, n, pieces, beta, c);
  return true;
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*, float, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*, double,
                           double*);
template void gemm_batched<float>(bool, bool, int64_t, int64_t, int64_t, int64_t, float, const float*, const float*,
                                  float, float*);
template void gemm_batched<double>(bool, bool, int64_t, int64_t, int64_t, int64_t, double, const double*, const double*,
                                   double, double*);

}  // namespace luong::cpu
