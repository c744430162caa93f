// Branch-free float32 math that GCC auto-vectorises (AVX2/AVX-512 at -march=x86-64-v3 and above), for the
// hot loops where libm's scalar expf dominated the profile (the 1280 x 8000 softmax of the generator).
// Accuracy: about 1 ulp over the range used (relative error < 2e-7), far inside the 1e-5 float32 parity
// budget. Double precision keeps std::exp everywhere: gradient checks need exact libm results.
#pragma once
#include <cstdint>


namespace luong::cpu {
// Internal linkage: the pointwise kernels are compiled twice, for AVX2 and for AVX-512 (wide_vectors.h), and a
// copy of one of these functions left out of line must stay in its own file, or the linker could hand the
// AVX-512 one to the AVX2 build.
namespace {

// e^x by Cody-Waite range reduction x = n ln2 + r, |r| <= ln2 / 2, a degree-6 minimax polynomial for e^r
// (Cephes' expf coefficients) and 2^n assembled in the exponent bits. NaN propagates (comparisons with
// NaN are false, so the clamps keep it); inputs are clamped to the normal range, so -inf gives ~1e-38
// rather than 0 — callers use it only on max-shifted values of a finite row.
inline float fast_exp(float x) {
  constexpr float kHi = 88.3762626647949f, kLo = -87.3365447504f;
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  x = x > kHi ? kHi : x;
  x = x < kLo ? kLo : x;
  // Round x log2(e) to the nearest integer by the 1.5 * 2^23 shifter: no libm call, so the loop vectorises.
  constexpr float kShifter = 12582912.0f;
  const float n = (x * kLog2e + kShifter) - kShifter;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return p * __builtin_bit_cast(float, bits);
}

// 1 / (1 + e^-x), about 2 ulps.
inline float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

// tanh: an odd Taylor polynomial to x^11 below |x| = 0.3 (truncation < 1e-8 relative), where the exp form
// would cancel; 1 - 2 / (e^2|x| + 1) above it (about 2 ulps). Both are computed and one is selected, so the
// loop stays branch-free.
inline float fast_tanh(float x) {
  const float ax = x < 0.0f ? -x : x;
  const float x2 = ax * ax;
  float p = -1382.0f / 155925.0f;
  p = p * x2 + 62.0f / 2835.0f;
  p = p * x2 - 17.0f / 315.0f;
  p = p * x2 + 2.0f / 15.0f;
  p = p * x2 - 1.0f / 3.0f;
  const float small = ax + ax * x2 * p;
  const float large = 1.0f - 2.0f / (fast_exp(2.0f * ax) + 1.0f);
  const float t = ax < 0.3f ? small : large;
  return x < 0.0f ? -t : t;
}

// The activations the kernels use, by type: float takes the vectorised forms above, double keeps libm so
// float64 gradient checks compare against exact functions.
inline float act_sigmoid(float x) { return fast_sigmoid(x); }
inline double act_sigmoid(double x) { return 1.0 / (1.0 + __builtin_exp(-x)); }
inline float act_tanh(float x) { return fast_tanh(x); }
inline double act_tanh(double x) { return __builtin_tanh(x); }

// Max and sum of a row with 16 independent lanes, so the loops vectorise without -ffast-math. The lane
// split depends only on n, never on the thread count: results are bitwise reproducible.
inline constexpr int kLanes = 16;

// The lanes are two 8-float vectors written out: GCC 12 turns the select `x > m ? x : m` into a scalar vmaxss and
// vectorises neither the loop nor the 16 lanes, so the loss kernel's max pass ran one element a cycle (perf:
// a quarter of cross_entropy_inplace's samples). The select per lane is the same, so is the result.
inline float row_max(const float* x, int64_t n) {
  using Floats8 = float __attribute__((vector_size(32)));
  constexpr float kLow = -__builtin_inff();
  Floats8 lo = {kLow, kLow, kLow, kLow, kLow, kLow, kLow, kLow}, hi = lo;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Floats8 a, b;
    __builtin_memcpy(&a, x + j, sizeof a);  // unaligned loads
    __builtin_memcpy(&b, x + j + 8, sizeof b);
    lo = a > lo ? a : lo;
    hi = b > hi ? b : hi;
  }
  float m = kLow;
  for (int l = 0; l < 8; ++l) m = lo[l] > m ? lo[l] : m;
  for (int l = 0; l < 8; ++l) m = hi[l] > m ? hi[l] : m;
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

inline float row_sum(const float* x, int64_t n) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += x[j + l];
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += lane[l];
  for (; j < n; ++j) s += x[j];
  return s;
}

// y[j] = e^(x[j] - shift) for all j; returns their sum (lane-wise, as row_sum). y may alias x.
inline float exp_shifted_sum(const float* x, float shift, float* y, int64_t n) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float e = fast_exp(x[j + l] - shift);
      y[j + l] = e;
      lane[l] += e;
    }
  float s = 0.0f;
  for (int l = 0; l < kLanes; ++l) s += lane[l];
  for (; j < n; ++j) {
    y[j] = fast_exp(x[j] - shift);
    s += y[j];
  }
  return s;
}

}  // namespace
}  // namespace luong::cpu
