// The two block kernels behind the CPU's bf16 GEMM (bf16_gemm.h) and the packed layout they share. bf16_gemm.cpp
// packs the operands once and decides which blocks of C run where; a block kernel computes one 32 x 32 block of C
// over a range of depths. AMX (amx_bf16_block.cpp) does it on tiles, AVX512-BF16 (avx512_bf16_block.cpp) in vector
// registers; both read the same packing, so a weight packed once serves either.
#pragma once
#include <cstdint>

namespace luong::cpu::bf16_layout {

constexpr int64_t kTile = 16;   // rows of an A tile; columns of a B panel (one 64-byte row of 16 float32 / pairs)
constexpr int64_t kDepth = 32;  // bf16 values in a 64-byte row: the depths of one A slice
constexpr int64_t kBlock = 32;  // a unit of work: a 32 x 32 block of C (two A tiles by two B panels)

// op(A) (m x k) packed: tile by tile of 16 rows, each tile's 32-depth slices in order, a slice 16 rows of 32 bf16
// values (1 KB contiguous). Row i's depths p0 .. p0 + 31 (p0 a multiple of 32) start at this offset (bf16 values)
// into the packing; kp is the padded depth. One function for the packer's writes and the kernels' reads.
inline int64_t a_slice(int64_t kp, int64_t i, int64_t p0) {
  return ((i / kTile) * (kp / kDepth) + p0 / kDepth) * (kTile * kDepth) + (i % kTile) * kDepth;
}

// op(B) (k x n) packed: panels of 16 columns, panel q at packed + q * kp * 16 holding kp / 2 pair rows of 64 bytes,
// pair row r = (op(B)[2r][16q + j], op(B)[2r + 1][16q + j]) for j = 0..15, the first in the low half of each
// 32-bit word: the layout TDPBF16PS reads, and one VDPBF16PS operand a row.
inline const uint16_t* b_panel(const uint16_t* packed, int64_t kp, int64_t q) { return packed + q * kp * kTile; }

}  // namespace luong::cpu::bf16_layout

namespace luong::cpu {

// C block (rows i0 .. i0 + 31, panels q0 and q0 + 1) = sum over depths [p0, p1) of op(A) op(B), written to `out`
// (rows ld floats apart); with `add` the sums start from out's values instead of zero. p0 and p1 are multiples of
// 32 within the padded depth kp. The depths are summed in one fixed order, whichever thread runs the block.
using Bf16BlockFn = void (*)(const uint16_t* pa, const uint16_t* pb, int64_t kp, int64_t i0, int64_t q0, int64_t p0,
                             int64_t p1, float* out, int64_t ld, bool add);

// AMX: the CPU has AMX-TILE and AMX-BF16 and the kernel granted this process the tile state (arch_prctl).
bool amx_tiles_available();
void amx_load_tile_config();  // once per thread before amx_bf16_block (cheap; run per range of blocks)
void amx_bf16_block(const uint16_t* pa, const uint16_t* pb, int64_t kp, int64_t i0, int64_t q0, int64_t p0, int64_t p1,
                    float* out, int64_t ld, bool add);

// AVX512-BF16 (AMD Zen 4 and later, Intel Cooper Lake and later): VDPBF16PS, 16 lanes each adding two bf16
// products a step, twice the multiply-adds of a float32 FMA.
bool avx512_bf16_available();
// Available and worth choosing by default: where VDPBF16PS issues nearly as fast as the float32 FMA (AMD; Zen 5:
// 924 against 507 GFLOP/s on two threads). Intel's issues at a quarter of the FMA's rate (Emerald Rapids: 82 against
// 170 GFLOP/s a thread), so there the kernel would run at half the float32 rate, and the emulation stays the default.
bool avx512_bf16_preferred();
void avx512_bf16_block(const uint16_t* pa, const uint16_t* pb, int64_t kp, int64_t i0, int64_t q0, int64_t p0,
                       int64_t p1, float* out, int64_t ld, bool add);

}  // namespace luong::cpu
