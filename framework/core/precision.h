// The precision of float32 GEMMs (cpu::gemm<float>, cuda::gemm<float> and their batched forms): a
// process-wide switch, read by the GEMM kernels on every call. Float64 GEMMs are never affected.
//
//   fp32  full float32 (the default). The parity tests (CPU vs CUDA, gradient checks, bitwise resume)
//         compare against float32 results and need this, so reduced precision is strictly opt-in.
//   tf32  inputs rounded to TF32 (8-bit exponent, 10-bit mantissa), products accumulated in float32. CUDA:
//         cuBLAS with CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores). CPU: emulated by rounding the inputs
//         (round to nearest even) and calling sgemm, so one config runs on every device.
//   bf16  inputs rounded to bfloat16 (8-bit exponent, 7-bit mantissa), products accumulated in float32.
//         CUDA: the inputs converted to bf16 in scratch from the caching allocator, then cublasGemmEx with
//         CUDA_R_16BF inputs and CUBLAS_COMPUTE_32F. CPU: emulated as for tf32 (exact: a product of two bf16
//         values is exact in float32, so sgemm on rounded inputs is a bf16 GEMM with float32 accumulation).
//
// Only GEMM inputs are rounded: outputs (C, accumulated with the caller's alpha/beta in float32), parameters,
// gradients, optimizer state and activations stay float32. docs/MIXED_PRECISION.md has the details.
#pragma once
#include <bit>
#include <cstdint>
#include <string>

namespace luong {

enum class GemmPrecision : uint8_t { fp32, tf32, bf16 };

void set_gemm_precision(GemmPrecision p);
GemmPrecision gemm_precision();

// "fp32", "tf32", "bf16"; anything else is an error naming the value and the valid ones.
GemmPrecision parse_gemm_precision(const std::string& s);
const char* to_string(GemmPrecision p);

// Sets the precision for a scope and restores the previous one (tests, benchmarks).
class GemmPrecisionGuard {
 public:
  explicit GemmPrecisionGuard(GemmPrecision p) : prev_(gemm_precision()) { set_gemm_precision(p); }
  ~GemmPrecisionGuard() { set_gemm_precision(prev_); }
  GemmPrecisionGuard(const GemmPrecisionGuard&) = delete;
  GemmPrecisionGuard& operator=(const GemmPrecisionGuard&) = delete;

 private:
  GemmPrecision prev_;
};

// x rounded to nearest even at `mantissa_bits` explicit mantissa bits (7 = bf16, 10 = tf32), returned as
// a float32 whose low bits are zero. Infinities stay infinite, a value past the largest finite one rounds
// to infinity, NaN stays NaN; subnormals round like normal numbers (bf16 and tf32 keep float32's exponent).
inline float round_mantissa_rne(float x, int mantissa_bits) {
  const int drop = 23 - mantissa_bits;
  uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7F800000u) == 0x7F800000u) {  // Inf stays Inf; NaN becomes the quiet NaN of its sign
    return (bits & 0x007FFFFFu) ? std::bit_cast<float>((bits & 0xFF800000u) | 0x00400000u) : x;
  }
  bits += ((1u << (drop - 1)) - 1u) + ((bits >> drop) & 1u);
  return std::bit_cast<float>(bits & ~((1u << drop) - 1u));
}
inline float round_to_bf16(float x) { return round_mantissa_rne(x, 7); }
inline float round_to_tf32(float x) { return round_mantissa_rne(x, 10); }

}  // namespace luong
