// bf16 GEMM on Intel AMX tiles: C (m, n) = alpha op(A) op(B) + beta C with A and B rounded to bfloat16 (round
// to nearest even) and the products accumulated in float32, which is what train.precision = bf16 means
// (framework/core/precision.h). Without AMX the CPU emulates that (rounded float32 copies, then sgemm), which is
// slower than plain float32; with AMX (Sapphire Rapids and later) one TDPBF16PS does a 16 x 16 x 32 block,
// 16 times the work of a 512-bit float32 FMA per cycle.
//
// How: op(A) is packed into bf16 rows of a depth padded to 32, op(B) into 16-column panels in the pairwise
// (VNNI) layout TDPBF16PS reads, both with AVX-512 and in parallel. Each unit of work is a 32 x 32 block of C
// held in four tiles while the depth runs (starting from C itself when beta is 1 and alpha 1), then stored to C;
// a deep product (K > 2048) runs in depth slices, a block's partial sums kept in C between them. A block's depths
// are always summed in the same order, so the bits do not depend on the thread count.
//
// Numerics differ from the emulation in two documented ways of the instruction: inputs that round to bf16
// subnormals count as zero, and each accumulation step flushes a subnormal result to zero; and the two
// products of a pair are added to the accumulator one after the other, so the summation order is not sgemm's.
// Both are float32 rounding-level differences (tests/ops/amx_bf16_gemm_test.cpp bounds them).
#pragma once
#include <cstdint>

namespace luong::cpu {

// The CPU has AMX-TILE and AMX-BF16 and the kernel granted this process the tile state (arch_prctl).
bool amx_bf16_supported();
// Supported and not turned off (LUONG_AMX=0 in the environment, or set_amx_bf16_enabled(false) for A/B
// measurements and tests). gemm() sends bf16-precision float32 products here when true.
bool amx_bf16_enabled();
// Returns the previous setting; turning it on where unsupported leaves it off.
bool set_amx_bf16_enabled(bool on);
// The GEMM precision is bf16 and the kernel is enabled: CPU float32 products run here (gemm(), weight_gemm).
bool bf16_gemms_on_amx();

// Row-major operands; op(A) = A^T when trans_a (A stored (k, m)), op(B) = B^T when trans_b (B stored (n, k)).
// beta 0 never reads C. Requires amx_bf16_supported(); m, n, k > 0.
void amx_bf16_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   const float* b, float beta, float* c);

// The same with op(B) packed beforehand (a weight used by many products of a step loop, ops/weight_gemm.h): A is
// (m, k) row-major, alpha 1.
int64_t amx_packed_size(int64_t k, int64_t n);  // bf16 values
void amx_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, uint16_t* packed);
void amx_bf16_gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* packed_b, float beta,
                          float* c);

}  // namespace luong::cpu
