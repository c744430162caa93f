#include "framework/kernels/cpu/philox_blocks.h"

#include <immintrin.h>

#include "framework/core/philox.h"

namespace luong::cpu {
namespace {

// The high and low 32 bits of the 8 products x * m: VPMULUDQ multiplies the even lanes only, so the odd lanes
// are shifted down for a second multiply and the halves blended back into place.
__attribute__((target("avx2"))) inline void mul_hi_lo(__m256i x, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(x, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), m);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Interleaved vectors of 8 blocks each: one vector's ten rounds are a chain of dependent multiplies, so
// several are kept in flight to fill the multiplier's pipeline.
constexpr int kVectors = 4;
constexpr int64_t kBlocksPerCall = 8 * kVectors;

// Blocks first .. first + kBlocksPerCall - 1 into out[0 .. 4 * kBlocksPerCall), in the scalar function's order.
__attribute__((target("avx2"))) void vector_blocks(uint64_t seed, uint64_t first, uint32_t* out) {
  alignas(32) uint32_t lo_words[kBlocksPerCall], hi_words[kBlocksPerCall];
  for (int l = 0; l < kBlocksPerCall; ++l) {  // the 64-bit counters, so a carry into the high word is exact
    const uint64_t counter = first + static_cast<uint64_t>(l);
    lo_words[l] = static_cast<uint32_t>(counter);
    hi_words[l] = static_cast<uint32_t>(counter >> 32);
  }
  __m256i c0[kVectors], c1[kVectors], c2[kVectors], c3[kVectors];
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    c0[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_words + 8 * v));
    c1[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_words + 8 * v));
    c2[v] = _mm256_setzero_si256(), c3[v] = _mm256_setzero_si256();
  }
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(kPhiloxMul0)),
                m1 = _mm256_set1_epi32(static_cast<int>(kPhiloxMul1));
  for (int round = 0; round < kPhiloxRounds; ++round) {
    const __m256i key0 = _mm256_set1_epi32(static_cast<int>(k0)), key1 = _mm256_set1_epi32(static_cast<int>(k1));
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      __m256i hi0, lo0, hi1, lo1;
      mul_hi_lo(c0[v], m0, hi0, lo0);
      mul_hi_lo(c2[v], m1, hi1, lo1);
      c0[v] = _mm256_xor_si256(_mm256_xor_si256(hi1, c1[v]), key0);
      c1[v] = lo1;
      c2[v] = _mm256_xor_si256(_mm256_xor_si256(hi0, c3[v]), key1);
      c3[v] = lo0;
    }
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  // Lane l of c0..c3 is block l's four words; interleave them into block order (a 4 x 8 transpose):
  // 32-bit then 64-bit unpacks give blocks (l, l + 4) per 128-bit half, the lane permutes put them in order.
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    const __m256i t0 = _mm256_unpacklo_epi32(c0[v], c1[v]), t1 = _mm256_unpackhi_epi32(c0[v], c1[v]);
    const __m256i t2 = _mm256_unpacklo_epi32(c2[v], c3[v]), t3 = _mm256_unpackhi_epi32(c2[v], c3[v]);
    const __m256i b04 = _mm256_unpacklo_epi64(t0, t2), b15 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i b26 = _mm256_unpacklo_epi64(t1, t3), b37 = _mm256_unpackhi_epi64(t1, t3);
    __m256i* dst = reinterpret_cast<__m256i*>(out + 32 * v);
    _mm256_storeu_si256(dst + 0, _mm256_permute2x128_si256(b04, b15, 0x20));
    _mm256_storeu_si256(dst + 1, _mm256_permute2x128_si256(b26, b37, 0x20));
    _mm256_storeu_si256(dst + 2, _mm256_permute2x128_si256(b04, b15, 0x31));
    _mm256_storeu_si256(dst + 3, _mm256_permute2x128_si256(b26, b37, 0x31));
  }
}

bool has_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}

}  // namespace

void philox_blocks_scalar(uint64_t seed, uint64_t first, int64_t count, uint32_t* out) {
  for (int64_t i = 0; i < count; ++i) {
    const Philox4x32 r = philox4x32_10(first + static_cast<uint64_t>(i), 0, seed);
    for (int j = 0; j < 4; ++j) out[4 * i + j] = r.v[j];
  }
}

void philox_blocks(uint64_t seed, uint64_t first, int64_t count, uint32_t* out) {
  int64_t i = 0;
  if (has_avx2())
    for (; i + kBlocksPerCall <= count; i += kBlocksPerCall)
      vector_blocks(seed, first + static_cast<uint64_t>(i), out + 4 * i);
  philox_blocks_scalar(seed, first + static_cast<uint64_t>(i), count - i, out + 4 * i);
}

}  // namespace luong::cpu
