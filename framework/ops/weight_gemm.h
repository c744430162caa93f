// Products with a weight matrix, x op(W), that reuse one packed copy of W across the many small GEMMs of a
// step loop (kernels/cpu/packed_gemm.h: on 2 Zen 4 cores the decoder's 64 x 256 x 1024 products went from
// 130-180 to about 210 GFLOP/s).
//
// A PackedWeightScope marks a stretch of work during which weights are read-only: the decoder's step loop,
// one backward pass, one lstm_sequence node, one greedy or beam decoding. Inside it, the first product with
// a given weight (and transposition) packs it, and later ones reuse the packed copy; it is dropped when the
// outermost scope ends. On CUDA under bf16 GEMM precision the kept copy is the weight converted to bf16, so
// it is converted once per scope instead of once per product (same values, same cuBLAS call); on a CPU with
// AMX or AVX512-BF16 under bf16 it is the weight's bf16 panels for those kernels (kernels/cpu/bf16_gemm.h).
// Outside any scope, and for float64, fp32 or tf32 on CUDA, tf32 on the CPU, bf16 on a CPU without AMX or
// AVX512-BF16, or a CPU without AVX-512, weight_gemm is plain gemm(). Scopes are per thread and nest.
//
// Only parameters are cached (see is_parameter_view): trainable leaves, which nothing writes during a
// forward or backward pass, and views of them. The cache holds each packed weight's tensor, so its storage
// cannot be freed and its address reused by another tensor while the entry exists.
#pragma once
#include <cstdint>

#include "framework/autograd/variable.h"
#include "framework/tensor/tensor.h"

namespace luong {

class PackedWeightScope {
 public:
  PackedWeightScope();
  ~PackedWeightScope();
  PackedWeightScope(const PackedWeightScope&) = delete;
  PackedWeightScope& operator=(const PackedWeightScope&) = delete;
};

// True for a trainable leaf (requires_grad), a model parameter (frozen ones too: VariableImpl::is_parameter)
// and a slice or reshape of either, made with or without gradient recording: the operands that may be packed once per
// scope. An activation (a fresh result of arithmetic) is false.
bool is_parameter_view(const Variable& v);
// Called by slice and reshape on their result: marks it when its source is a parameter view. Returns it.
Variable mark_parameter_view(const Variable& source, Variable result);

// C (m, n) = A (m, k) op(W) + beta C, where op(W) = W (k, n) or, with trans_w, W^T for W (n, k). A and C are
// contiguous row-major buffers on W's device. `cacheable`: W is a parameter (is_parameter_view, decided by
// the caller when it records the op) and may be packed once for the current scope.
template <class T>
void weight_gemm(bool trans_w, int64_t m, int64_t n, int64_t k, const T* a, const Tensor& w, T beta, T* c,
                 bool cacheable);

// Turns the CUDA bf16 copies on or off (on by default; off, every bf16 product converts its weight again),
// for tests and for luong_step_bench --bf16-weight-copies to measure them. Returns the previous setting.
bool set_bf16_weight_copies_enabled(bool on);

// Packed or bf16 copies alive in this thread's cache (tests).
int64_t packed_weight_cache_entries();

}  // namespace luong
