#include "framework/kernels/cpu/bf16_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/core/precision.h"
#include "framework/kernels/cpu/avx512_microkernel.h"
#include "framework/kernels/cpu/bf16_blocks.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/prefetch_tile.h"
#include "framework/kernels/cpu/stealing_ranges.h"

namespace luong::cpu {
namespace {

using avx512::lane_mask;

using bf16_layout::a_slice;
using bf16_layout::kBlock;
using bf16_layout::kDepth;
using bf16_layout::kTile;

// Blocks a thread claims at a time when the threads share a product's blocks (stealing_ranges.h).
constexpr int64_t kBlocksPerRange = 8;
// Depth of a slice of a product deeper than twice this (multiply). Measured with the generator's dx (256 x 256,
// K = 8000): slices of 1024 or 2048 ran 10-14% faster than one pass, slices of 512 or 256 no faster; products of
// K 1024 and 1280 ran slower in slices of 512 or 1024 than in one pass, so they keep it.
constexpr int64_t kSliceDepth = 1024;
constexpr int64_t kGroupBytes = 1 << 20;  // packed B kept in L2 while the row blocks sweep it (2 MB a core)

// The default: AMX, else AVX512-BF16 where it pays, else the emulation.
Bf16Kernel default_kernel() {
  if (bf16_kernel_supported(Bf16Kernel::amx)) return Bf16Kernel::amx;
  if (avx512_bf16_preferred()) return Bf16Kernel::avx512_bf16;
  return Bf16Kernel::emulated;  // AVX512-BF16 on Intel only when asked for (bf16_blocks.h says why)
}

// LUONG_BF16_KERNEL names a kernel (one this CPU lacks leaves the default); LUONG_AMX=0 keeps AMX out.
Bf16Kernel from_environment() {
  Bf16Kernel kernel = default_kernel();
  const char* amx = std::getenv("LUONG_AMX");
  if (amx && std::strcmp(amx, "0") == 0 && kernel == Bf16Kernel::amx) kernel = Bf16Kernel::emulated;
  const char* name = std::getenv("LUONG_BF16_KERNEL");
  if (!name || !*name) return kernel;
  // The one list of the variable's words: the parse and the error message both read it.
  constexpr std::pair<const char*, Bf16Kernel> kWords[] = {
      {"amx", Bf16Kernel::amx}, {"avx512", Bf16Kernel::avx512_bf16}, {"emulated", Bf16Kernel::emulated}};
  for (const auto& [word, chosen] : kWords)
    if (std::strcmp(name, word) == 0) return bf16_kernel_supported(chosen) ? chosen : kernel;
  std::string words;  // "amx, avx512 or emulated"
  for (size_t i = 0; i < std::size(kWords); ++i)
    words += std::string(i == 0 ? "" : i + 1 == std::size(kWords) ? " or " : ", ") + kWords[i].first;
  LUONG_FAIL("LUONG_BF16_KERNEL=" + std::string(name) + " is not a bf16 kernel (" + words + ")");
}

std::atomic<Bf16Kernel>& chosen_kernel() {
  static std::atomic<Bf16Kernel> kernel(from_environment());
  return kernel;
}

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The packers' instructions: both kernels' CPUs have them (bf16_kernel_supported). A lambda does not inherit its
// enclosing function's target attribute, so the packing loops' bodies (lambdas run by parallel_ranges) state it too.
#define LUONG_PACKING __attribute__((target("avx512f,avx512bw,avx512bf16")))

// Floats become bf16 by VCVTNE2PS2BF16: nearest even, as the emulation's round_to_bf16, and NaN stays NaN. It reads
// subnormal inputs as zero, as VDPBF16PS and TDPBF16PS read subnormal bf16 anyway; the only floats it rounds
// otherwise than round_to_bf16 are those within half a bf16 step below the smallest normal (round_to_bf16 takes them
// up to 2^-126, here they are 0). One instruction for 32 values instead of ten a vector of 16 for the rounding in
// integer arithmetic it replaced: the packers' share of the bf16 step's cycles fell from 0.28 to 0.23 of the
// kernel's (perf, four runs each).

// 32 floats at src (the first `valid` of them; the rest read as zero) as 32 bf16 values in order.
LUONG_PACKING inline __m512i bf16x32(const float* src, int64_t valid) {
  const __m512 lo = _mm512_maskz_loadu_ps(lane_mask(valid), src);
  const __m512 hi = _mm512_maskz_loadu_ps(lane_mask(valid - 16), src + 16);
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
}

// Rows p and p + 1 of a row-major matrix with `width` columns and `depth` rows, 16 columns from j0 (those
// in `cols`): word j = (x[p][j0 + j], x[p + 1][j0 + j]) in bf16, the first in the low half, as TDPBF16PS
// pairs consecutive depths. Rows at or past `depth` read as zero.
LUONG_PACKING inline __m512i pair_words(const float* x, int64_t width, int64_t depth, int64_t p, int64_t j0,
                                        __mmask16 cols) {
  const __m512 x0 = _mm512_maskz_loadu_ps(p < depth ? cols : 0, x + p * width + j0);
  const __m512 x1 = _mm512_maskz_loadu_ps(p + 1 < depth ? cols : 0, x + (p + 1) * width + j0);
  // x0's 16 values in halfwords 0..15, x1's in 16..31; interleaved into pairs.
  const __m512i halves = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(x1, x0));
  const __m512i pairs = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                         5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_maskz_permutexvar_epi16(0xFFFFFFFF, pairs, halves);
}

// The zero-masked ("maskz") forms of the intrinsics here, with every lane selected, are the plain operations; the
// plain intrinsics pass GCC 12 an undefined vector that -Wmaybe-uninitialized reports under -Werror.

// v[r][c] becomes v[c][r] for 16 vectors of 16 32-bit words: 4 x 4 blocks transposed within each 128-bit lane
// (32- then 64-bit interleaves), then the 4 x 4 grid of lanes transposed across vectors (two lane shuffles).
__attribute__((target("avx512f"))) inline void transpose_16x16_epi32(__m512i* v) {
  __m512i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_maskz_unpacklo_epi32(0xFFFF, v[2 * i], v[2 * i + 1]);
    a[2 * i + 1] = _mm512_maskz_unpackhi_epi32(0xFFFF, v[2 * i], v[2 * i + 1]);
  }
  // b[4g + c], lane L: rows 4g .. 4g + 3 at column 4L + c.
  for (int g = 0; g < 4; ++g) {
    b[4 * g + 0] = _mm512_maskz_unpacklo_epi64(0xFF, a[4 * g], a[4 * g + 2]);
    b[4 * g + 1] = _mm512_maskz_unpackhi_epi64(0xFF, a[4 * g], a[4 * g + 2]);
    b[4 * g + 2] = _mm512_maskz_unpacklo_epi64(0xFF, a[4 * g + 1], a[4 * g + 3]);
    b[4 * g + 3] = _mm512_maskz_unpackhi_epi64(0xFF, a[4 * g + 1], a[4 * g + 3]);
  }
  // Column 4L + c gathers lane L of b[c], b[4 + c], b[8 + c], b[12 + c].
  for (int c = 0; c < 4; ++c) {
    const __m512i s0 = _mm512_maskz_shuffle_i32x4(0xFFFF, b[c], b[4 + c], 0x44),
                  s1 = _mm512_maskz_shuffle_i32x4(0xFFFF, b[c], b[4 + c], 0xEE);
    const __m512i s2 = _mm512_maskz_shuffle_i32x4(0xFFFF, b[8 + c], b[12 + c], 0x44);
    const __m512i s3 = _mm512_maskz_shuffle_i32x4(0xFFFF, b[8 + c], b[12 + c], 0xEE);
    v[c] = _mm512_maskz_shuffle_i32x4(0xFFFF, s0, s2, 0x88);
    v[4 + c] = _mm512_maskz_shuffle_i32x4(0xFFFF, s0, s2, 0xDD);
    v[8 + c] = _mm512_maskz_shuffle_i32x4(0xFFFF, s1, s3, 0x88);
    v[12 + c] = _mm512_maskz_shuffle_i32x4(0xFFFF, s1, s3, 0xDD);
  }
}

// op(A) (m x k) into bf16 tiles (a_slice), rows m..mp-1 and depths k..kp-1 zero.
LUONG_PACKING void pack_a(bool trans_a, int64_t m, int64_t k, const float* a, int64_t mp, int64_t kp, uint16_t* out) {
  if (!trans_a) {
    parallel_ranges(mp, m * k >= (1 << 16), [=](int64_t lo, int64_t hi) LUONG_PACKING {
      for (int64_t i = lo; i < hi; ++i) {
        for (int64_t p = 0; p < kp; p += kDepth)
          _mm512_storeu_si512(out + a_slice(kp, i, p), i < m ? bf16x32(a + i * k + p, k - p) : _mm512_setzero_si512());
      }
    });
    return;
  }
  // A is (k, m): op(A)[i][p] = a[p * m + i], so A's rows hold the depths. Per 32 depths (a slice of every row
  // tile): 16 pair words of two consecutive rows of A, built as pack_b builds them, are the 16 x 16 transpose of
  // what the row tile wants, one 64-byte row per row of op(A). A slice reads 32 whole rows of A in order and
  // writes whole 1 KB tiles.
  parallel_ranges(kp / kDepth, m * k >= (1 << 16), [=](int64_t first, int64_t last) LUONG_PACKING {
    for (int64_t p0 = first * kDepth; p0 < last * kDepth; p0 += kDepth) {
      for (int64_t i0 = 0; i0 < mp; i0 += kTile) {
        const __mmask16 cols = i0 < m ? lane_mask(m - i0) : 0;
        __m512i words[kTile];
        for (int64_t r = 0; r < kTile; ++r) words[r] = pair_words(a, m, k, p0 + 2 * r, i0, cols);
        transpose_16x16_epi32(words);
        for (int64_t i = 0; i < kTile; ++i) _mm512_storeu_si512(out + a_slice(kp, i0 + i, p0), words[i]);
      }
    }
  });
}

// op(B) (k x n) into panels of 16 columns in the pairwise layout TDPBF16PS reads: panel q holds kp / 2 rows of
// 32 values, row r = (op(B)[2r][16q + j], op(B)[2r + 1][16q + j]) for j = 0..15, at out + q * kp * 16. Columns
// n..np-1 and depths k..kp-1 are zero.
LUONG_PACKING void pack_b(bool trans_b, int64_t k, int64_t n, const float* b, int64_t np, int64_t kp, uint16_t* out) {
  const int64_t panels = np / kTile;
  if (!trans_b) {
    // Two rows of B at a time, read in order: their 16 columns of a panel become one 64-byte pair row, the
    // first row's value in the low half of each 32-bit word.
    parallel_ranges(kp / 2, n * k >= (1 << 16), [=](int64_t lo, int64_t hi) LUONG_PACKING {
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t p = 2 * r;
        for (int64_t q = 0; q < panels; ++q) {
          const int64_t j0 = q * kTile, cols = n - j0;
          _mm512_storeu_si512(out + q * kp * kTile + r * 2 * kTile, pair_words(b, n, k, p, j0, lane_mask(cols)));
        }
      }
    });
    return;
  }
  // B is (n, k): column j of op(B) is row j of B, whose consecutive depths are already the pairs. 32 depths of
  // 16 rows of B are 16 rows of 16 pair words, the transpose of the panel's next 16 pair rows (1 KB in order).
  parallel_ranges(panels, n * k >= (1 << 16), [=](int64_t lo, int64_t hi) LUONG_PACKING {
    for (int64_t q = lo; q < hi; ++q) {
      uint16_t* panel = out + q * kp * kTile;  // kp / 2 rows of 16 pair words
      for (int64_t p0 = 0; p0 < kp; p0 += kDepth) {
        __m512i words[kTile];
        for (int64_t j = 0; j < kTile; ++j) {
          const int64_t col = q * kTile + j;
          words[j] = col < n ? bf16x32(b + col * k + p0, k - p0) : _mm512_setzero_si512();
        }
        transpose_16x16_epi32(words);
        for (int64_t r = 0; r < kTile; ++r) _mm512_storeu_si512(panel + (p0 / 2 + r) * 2 * kTile, words[r]);
      }
    }
  });
}
#undef LUONG_PACKING

// C = alpha op(A) pb + beta C for op(B) packed by pack_b: packs A, then the blocks of C in parallel.
void multiply(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const uint16_t* pb,
              float beta, float* c) {
  LUONG_CHECK(m > 0 && n > 0 && k > 0, "bf16_gemm: empty product");
  const Bf16Kernel kernel = bf16_kernel();
  LUONG_CHECK(kernel != Bf16Kernel::emulated, "bf16_gemm: this CPU offers neither AMX-BF16 nor AVX512-BF16");
  const bool tiles = kernel == Bf16Kernel::amx;
  const Bf16BlockFn block = tiles ? amx_bf16_block : avx512_bf16_block;
  const int64_t mp = round_up(m, kBlock), np = round_up(n, kBlock), kp = round_up(k, kDepth);
  // Per calling thread, grown to the largest product seen and then kept: no allocation in a steady step.
  thread_local std::vector<uint16_t> packed_a;
  if (packed_a.size() < static_cast<size_t>(mp * kp)) packed_a.resize(static_cast<size_t>(mp * kp));
  pack_a(trans_a, m, k, a, mp, kp, packed_a.data());
  const uint16_t* pa = packed_a.data();
  const int64_t row_blocks = mp / kBlock, col_blocks = np / kBlock, units = row_blocks * col_blocks;
  // The order of the blocks decides where the operands come from. Column blocks are taken in groups whose packed
  // B fits in half of L2; within a group, row blocks outer. Consecutive units then share A's two row tiles (in
  // L1), and the group's B stays in L2 while every row block sweeps it, instead of a wide B (the generator's
  // 8000 columns: 4 MB in bf16) being read again from L3 for each row block (about 10% on the logits).
  // A deep product runs in depth slices, every block of C once per slice, the whole blocks carrying their sums
  // in C between slices: float32 stored and reloaded exactly, so the bits are those of one pass. In one pass each
  // block streams its full depth of A and B (1 MB a block for the generator's dx, K = 8000); a slice's share of
  // them stays in cache while all the blocks use it. Edge blocks, and products with another alpha or beta, keep
  // one pass over the full depth through `acc`, in the last slice.
  const int64_t depth = kp > 2 * kSliceDepth ? kSliceDepth : kp;
  const int64_t group = std::max<int64_t>(1, kGroupBytes / (kBlock * depth * int64_t{sizeof(uint16_t)}));
  const bool direct = alpha == 1.0f && (beta == 0.0f || beta == 1.0f);
  int64_t p0 = 0, p1 = 0;  // the slice being run
  // The block of C unit u covers: rows from i0, columns from j0. Every group but the last holds row_blocks * group
  // units.
  auto origin = [&](int64_t u, int64_t& i0, int64_t& j0) {
    const int64_t g = u / (row_blocks * group), r = u % (row_blocks * group);
    const int64_t width = std::min(group, col_blocks - g * group);
    i0 = r / width * kBlock;
    j0 = (g * group + r % width) * kBlock;
  };
  // A whole block with alpha 1 and beta 0 or 1 (nearly every product of a step) goes straight between the kernel's
  // registers and C; an edge block, or another alpha or beta, through `acc`.
  auto is_direct = [&](int64_t i0, int64_t j0) { return direct && i0 + kBlock <= m && j0 + kBlock <= n; };
  auto run_blocks = [&](int64_t first, int64_t last) {
    if (tiles) amx_load_tile_config();
    const bool add = beta == 1.0f || p0 > 0;  // whole blocks start from C's values in this slice
    alignas(64) float acc[kBlock * kBlock];
    for (int64_t u = first; u < last; ++u) {
      int64_t i0, j0;
      origin(u, i0, j0);
      const int64_t q0 = j0 / kTile, rows = std::min(kBlock, m - i0), cols = std::min(kBlock, n - j0);
      if (is_direct(i0, j0)) {
        // The next block's C, when the kernel will start from it, is fetched while this one runs: a weight
        // gradient accumulates into a C of megabytes that other work of the step has pushed out of cache, and a
        // block's sums cannot start before their C arrives (generator dW in the step, LUONG_PROFILE, three
        // alternations: 510 / 499 / 566 -> 582 / 550 / 629 GFLOP/s).
        if (add && u + 1 < last) {
          int64_t next_i0, next_j0;
          origin(u + 1, next_i0, next_j0);
          if (is_direct(next_i0, next_j0)) prefetch_tile(c + next_i0 * n + next_j0, n, kBlock, kBlock);
        }
        block(pa, pb, kp, i0, q0, p0, p1, c + i0 * n + j0, n, add);
        continue;
      }
      if (p1 < kp) continue;
      block(pa, pb, kp, i0, q0, 0, kp, acc, kBlock, false);
      for (int64_t i = 0; i < rows; ++i) {
        float* dst = c + (i0 + i) * n + j0;
        const float* src = acc + i * kBlock;
        if (beta == 0.0f) {
          for (int64_t j = 0; j < cols; ++j) dst[j] = alpha * src[j];
        } else {
          for (int64_t j = 0; j < cols; ++j) dst[j] = alpha * src[j] + beta * dst[j];
        }
      }
    }
  };
  // Small products (an attention's per-sentence ones) stay on the calling thread: a parallel region costs more
  // than their work. Larger ones give each thread a contiguous run of blocks, in the order above, and let a
  // thread that finishes first take blocks from the back of the other's run (stealing_ranges.h), the split the
  // float32 kernels measured best on a shared host where one vCPU often lags. A block's depth runs in the fixed
  // order whichever thread runs it, so the bits do not depend on the thread count or on who stole what.
  const int threads = num_threads();
  const bool parallel = threads > 1 && units > 1 && m * n * k >= (1 << 18);
  for (p0 = 0; p0 < kp; p0 = p1) {
    p1 = std::min(kp, p0 + depth);
    if (parallel)
      run_stealing(units, balanced_units(units, kBlocksPerRange, threads), threads, run_blocks);
    else
      run_blocks(0, units);
  }
}

}  // namespace

const char* bf16_kernel_name(Bf16Kernel kernel) {
  switch (kernel) {
    case Bf16Kernel::amx:
      return "AMX tiles";
    case Bf16Kernel::avx512_bf16:
      return "AVX512-BF16";
    case Bf16Kernel::emulated:
      break;
  }
  return "emulated";
}

bool bf16_kernel_supported(Bf16Kernel kernel) {
  switch (kernel) {
    case Bf16Kernel::amx:
      // Every AMX CPU so far has AVX512-BF16 too; the packers convert with it, so the check says so.
      return amx_tiles_available() && avx512_bf16_available();
    case Bf16Kernel::avx512_bf16:
      return avx512_bf16_available();
    case Bf16Kernel::emulated:
      break;
  }
  return true;
}

Bf16Kernel bf16_kernel() { return chosen_kernel().load(std::memory_order_relaxed); }

Bf16Kernel set_bf16_kernel(Bf16Kernel kernel) {
  if (!bf16_kernel_supported(kernel)) return bf16_kernel();
  return chosen_kernel().exchange(kernel);
}

const char* bf16_route_name(bool packed_weight) {
  if (bf16_kernel() == Bf16Kernel::amx) return packed_weight ? "AMX bf16, packed weight" : "AMX bf16";
  return packed_weight ? "AVX512-BF16, packed weight" : "AVX512-BF16";
}

bool bf16_gemms_native() { return gemm_precision() == GemmPrecision::bf16 && bf16_kernel() != Bf16Kernel::emulated; }

int64_t bf16_packed_size(int64_t k, int64_t n) { return round_up(n, kBlock) * round_up(k, kDepth); }

void bf16_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, uint16_t* packed) {
  pack_b(trans_b, k, n, b, round_up(n, kBlock), round_up(k, kDepth), packed);
}

void bf16_gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* packed_b, float beta, float* c) {
  multiply(false, m, n, k, 1.0f, a, packed_b, beta, c);
}

void bf16_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
               float beta, float* c) {
  thread_local std::vector<uint16_t> packed_b;  // see multiply's scratch
  const size_t size = static_cast<size_t>(bf16_packed_size(k, n));
  if (packed_b.size() < size) packed_b.resize(size);
  bf16_pack_b(trans_b, k, n, b, packed_b.data());
  multiply(trans_a, m, n, k, alpha, a, packed_b.data(), beta, c);
}

}  // namespace luong::cpu
