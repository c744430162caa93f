// GEMM against a pre-packed right operand: C (m, n) = A (m, k) op(B) (k, n) + beta C, float32, AVX-512.
//
// Why: a decoder step multiplies a small batch (m = 64) by the same weight matrices T times per pass.
// OpenBLAS packs B again on every call (1 MB for a 256 x 1024 LSTM matrix) and splits m = 64 poorly over
// threads, so these GEMMs ran at 130-180 GFLOP/s on 2 Zen 4 cores. Packing B once per pass and reusing it
// every step reaches about 210 (bench/engine_bench, "Small-batch GEMM against a packed weight").
//
// Layout: op(B) is cut into panels of kPanelCols columns; panel p holds rows 0..k-1 of its columns, each
// row kPanelCols contiguous floats (the last panel zero-padded), so the microkernel reads B sequentially.
// A is read in place (row-major, contiguous rows).
//
// Every element of C is summed by one microkernel call in the order k = 0, 1, ..., so the result is
// bitwise the same for any number of threads. It differs from OpenBLAS's in the last bits (another
// summation order), as two BLAS libraries do.
#pragma once
#include <cstdint>

namespace luong::cpu {

constexpr int64_t kPanelCols = 32;

// Whether this CPU can run the packed kernels (AVX-512F).
bool packed_gemm_supported();
// Supported and not turned off (LUONG_PACKED_GEMM=0 in the environment, or set_packed_gemm_enabled(false)
// for A/B measurements and tests). When false, callers use gemm() (OpenBLAS).
bool packed_gemm_enabled();
// Returns the previous setting; turning it on where unsupported leaves it off.
bool set_packed_gemm_enabled(bool on);

// Floats needed to pack op(B) of k rows and n columns.
int64_t packed_size(int64_t k, int64_t n);

// Packs op(B): B is (k, n) row-major, or (n, k) row-major when trans_b (then op(B) = B^T).
void pack_b(bool trans_b, int64_t k, int64_t n, const float* b, float* packed);

// C (m, n) = A (m, k) op(B) + beta C with op(B) packed by pack_b. A and C are contiguous row-major.
// beta 0 never reads C.
void gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, const float* packed_b, float beta, float* c);

}  // namespace luong::cpu
