// bf16 GEMM on the CPU's bf16 instructions: C (m, n) = alpha op(A) op(B) + beta C with A and B rounded to bfloat16
// (round to nearest even) and the products accumulated in float32, which is what train.precision = bf16 means
// (framework/core/precision.h). Two kernels, chosen by what the CPU offers:
// - AMX tiles (Intel Sapphire Rapids and later): one TDPBF16PS does a 16 x 16 x 32 block, 16 times the work of a
//   512-bit float32 FMA per cycle (amx_bf16_block.cpp);
// - AVX512-BF16 (AMD Zen 4 and later, Intel Cooper Lake): VDPBF16PS in vector registers, twice the multiply-adds of a
//   float32 FMA (avx512_bf16_block.cpp).
// Without either the CPU emulates the arithmetic (rounded float32 copies, then sgemm; kernels/cpu/gemm.cpp), which is
// slower than plain float32.
//
// How: op(A) is packed into bf16 rows of a depth padded to 32, op(B) into 16-column panels of depth pairs
// (bf16_blocks.h), both with AVX-512 and in parallel. Each unit of work is a 32 x 32 block of C (starting from C itself
// when beta is 1 and alpha 1), then stored to C; a deep product (K > 2048) runs in depth slices, a block's partial
// sums kept in C between them. A block's depths are always summed in the same order, so the bits do not depend on the
// thread count.
//
// Numerics differ from the emulation in ways of the instructions: inputs that round to bf16 subnormals count as zero,
// and each accumulation step flushes a subnormal result to zero; and the two products of a pair are added to the
// accumulator one after the other, so the summation order is not sgemm's. Both are float32 rounding-level
// differences (tests/ops/bf16_gemm_test.cpp bounds them). The two kernels sum in different orders, so their bits
// differ from each other.
#pragma once
#include <cstdint>

namespace luong::cpu {

enum class Bf16Kernel { emulated, avx512_bf16, amx };
const char* bf16_kernel_name(Bf16Kernel kernel);  // "emulated", "AVX512-BF16", "AMX tiles"

// This CPU (and its OS) can run the kernel; emulated always can.
bool bf16_kernel_supported(Bf16Kernel kernel);
// The kernel bf16 products take. By default AMX where the CPU has it, else AVX512-BF16 where it runs faster than
// float32 (AMD Zen 4 and 5; on Intel it issues at a quarter of the FMA's rate, bf16_blocks.h), else the emulation;
// LUONG_BF16_KERNEL (amx, avx512, emulated) in the environment, or set_bf16_kernel, chooses another (A/B
// measurements, tests). LUONG_AMX=0, the older switch, means "not AMX": the emulation.
Bf16Kernel bf16_kernel();
// Returns the previous choice. An unsupported kernel is refused: the choice stays as it was.
Bf16Kernel set_bf16_kernel(Bf16Kernel kernel);
// The GEMM precision is bf16 and a native kernel is chosen: CPU float32 products run here (gemm(), weight_gemm).
bool bf16_gemms_native();
// The chosen kernel's name in the GEMM profile (gemm_profile.h): "AMX bf16", "AVX512-BF16", with ", packed weight"
// for products of a weight packed beforehand.
const char* bf16_route_name(bool packed_weight);

// Row-major operands; op(A) = A^T when trans_a (A stored (k, m)), op(B) = B^T when trans_b (B stored (n, k)).
// beta 0 never reads C. Runs the chosen kernel, which must not be `emulated`; m, n, k > 0.
void bf16_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
               float beta, float* c);

// The same with op(B) packed beforehand (a weight used by many products of a step loop, ops/weight_gemm.h): A is
// (m, k) row-major, alpha 1. Both kernels read the same packing.
int64_t bf16_packed_size(int64_t k, int64_t n);  // bf16 values
void bf16_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, uint16_t* packed);
void bf16_gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* packed_b, float beta, float* c);

}  // namespace luong::cpu
