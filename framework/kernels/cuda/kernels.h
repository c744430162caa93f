// The CUDA kernels: the same names, signatures and semantics as framework/kernels/cpu/*.h, so that
// LUONG_KERNEL(device, fn<T>, ...) routes a CUDA tensor's call here unchanged. Every pointer argument is a
// device pointer; scalars and the return values live on the host. Kernels run on the current device's
// stream (framework/kernels/cuda/device.h); functions that return a value synchronise that stream.
// Plain C++ (no CUDA types), so code compiled without nvcc can include it.
#pragma once
#include <cstdint>

#include "framework/kernels/cpu/elementwise.h"  // UnaryKind, BinaryKind

namespace luong::cuda {

// --- elementwise (elementwise.cu); see kernels/cpu/elementwise.h ---
template <class T> void unary_forward(UnaryKind k, int64_t n, const T* x, T* y);
template <class T> void unary_backward(UnaryKind k, int64_t n, const T* x, const T* y, const T* gy, T* gx);
template <class T>
void binary_forward(BinaryKind k, int64_t n, int64_t na, const T* a, int64_t nb, const T* b, T* out);
template <class T> void sum_rows_accumulate(int64_t rows, int64_t cols, const T* x, T* out);
template <class T> void affine(int64_t n, const T* x, T alpha, T beta, T* y);
template <class T> void axpy(int64_t n, T alpha, const T* x, T* y);
template <class T> void mul(int64_t n, const T* x, const T* m, T* y);
template <class T> void masked_fill(int64_t n, const T* x, int64_t n_mask, const uint8_t* mask, T value, T* y);
template <class T> void masked_fill_backward(int64_t n, const T* gy, int64_t n_mask, const uint8_t* mask, T* gx);
template <class T>
void window_mask(int64_t rows, int64_t cols, const T* centers, const uint8_t* src_mask, double radius, uint8_t* out);
// Bitwise the same mask as the CPU kernel: both read philox_uniform_at(seed, offset, i).
template <class T> void dropout_mask(int64_t n, float p, uint64_t seed, uint64_t offset, T* m);

// --- reductions (reduce.cu); see kernels/cpu/reduce.h ---
// Deterministic: a fixed grid that depends on n alone, block partials combined in a fixed tree order.
template <class T> double sum_all(int64_t n, const T* x);
template <class T> double sum_squares(int64_t n, const T* x);
template <class T> void sum_dim(int64_t outer, int64_t len, int64_t inner, const T* x, T* out);
template <class T> void sum_dim_backward(int64_t outer, int64_t len, int64_t inner, const T* gy, T* gx);
template <class T> void scale(int64_t n, T alpha, T* x);
template <class T> bool has_non_finite(int64_t n, const T* x);
// Results left on the device (no read back): capture-safe.
template <class T> void sum_all_to(int64_t n, const T* x, T* out);
template <class T> void sum_squares_to(int64_t n, const T* x, double* out);
void clip_decide(double* stats, int64_t tokens, double clip_norm);
template <class T> void scale_or_zero(int64_t n, const double* stats, T* x);

// --- softmax family (softmax.cu); see kernels/cpu/softmax.h ---
template <class T>
void softmax_forward(bool log, int64_t rows, int64_t cols, const T* x, const uint8_t* mask, T* y);
template <class T>
void softmax_backward(bool log, int64_t rows, int64_t cols, const T* y, const T* gy, const uint8_t* mask, T* gx);
template <class T>
void cross_entropy_forward(int64_t rows, int64_t cols, const T* logits, const int64_t* target, int64_t ignore_index,
                           T eps, T* logp, T* row_loss);
template <class T>
void cross_entropy_backward(int64_t rows, int64_t cols, const T* logp, const int64_t* target, int64_t ignore_index,
                            T eps, T g, T* glogits);

// --- the generator's in-place cross-entropy (cross_entropy_inplace.cu); see kernels/cpu/cross_entropy_inplace.h ---
template <class T>
void cross_entropy_inplace(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target,
                           int64_t ignore_index, T eps, T* row_loss, bool grad);

// --- fused attention step (attention_step.cu); see kernels/cpu/attention_step.h ---
// backward needs src * sizeof(T) bytes of shared memory: at most 12,288 source positions in float32.
template <class T>
void attention_step_forward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                            const uint8_t* mask, T* weights, T* context);
template <class T>
void attention_step_backward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                             const T* weights, const T* gc, const T* gw, T* dq, T* dk, T* dv);

// --- GEMM through cuBLAS (gemm.cpp); see kernels/cpu/gemm.h ---
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c);
template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  const T* b, T beta, T* c);

// --- fused LSTM cell (lstm_cell.cu); see kernels/cpu/lstm_cell.h ---
template <class T>
void lstm_cell_forward(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c, T* h,
                       const T* bias = nullptr);
template <class T>
void lstm_cell_backward(int64_t batch, int64_t hidden, const T* gates, const T* c_prev, const T* c, const T* dh,
                        const T* dc, T* dz, T* dc_prev, bool accumulate_dc_prev = true);
template <class T>
void lstm_carry_rows(int64_t rows, int64_t cols, const uint8_t* keep, const T* prev, T* x);

// --- gathers and block copies (gather.cu, embedding_backward.cu); see kernels/cpu/gather.h ---
template <class T>
int64_t embedding_forward(int64_t n, int64_t dim, int64_t rows, const int64_t* ids, const T* table, T* out);
template <class T>
void gather(int64_t n, const int64_t* index, const T* src, T* out);
// Deterministic by default (stable sort of the ids, then each row's contributions added in id order, the
// CPU's order); with set_deterministic(false) a faster atomicAdd scatter whose summation order varies.
template <class T>
void embedding_backward(int64_t n, int64_t dim, const int64_t* ids, int64_t padding_idx, const T* gout, T* gtable);
template <class T>
void copy_block(int64_t outer, int64_t inner, int64_t len, const T* src, int64_t src_len, int64_t src_start, T* dst,
                int64_t dst_len, int64_t dst_start, bool accumulate);
void concat_parts(int64_t count, const void* const* src, const int64_t* bytes, void* dst);
template <class T>
void transpose(int64_t outer, int64_t a, int64_t mid, int64_t b, int64_t inner, const T* src, T* dst, bool accumulate);

// --- fused optimizer updates (optim.cu); see kernels/cpu/optim_kernels.h ---
template <class T>
void sgd_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T lr, T momentum, T weight_decay);
template <class T>
void adam_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T* v, T lr, T beta1, T beta2, T eps,
                 T weight_decay, bool decoupled, T bias_correction1, T bias_correction2);
template <class T>
void ema_update(int64_t n, T* average, const T* param, T weight);
template <class T>
void swap_values(int64_t n, T* a, T* b);

// --- bf16 mixed precision (gemm_bf16.cpp, bf16.cu): gemm.cpp uses these under train.precision = bf16 ---
// bf16 values are stored as their raw 16 bits (the top half of a float32), as DType::bf16 tensors hold them.
// C = alpha * op(A) op(B) + beta * C with bf16 A and B, float32 accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F),
// and C in float32 or bf16. Row-major, same conventions as gemm().
void gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
               const uint16_t* b, float beta, float* c);
void gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
               const uint16_t* b, float beta, uint16_t* c);
// C = A op(W) + beta C for a float32 A, converted to bf16 in scratch, and a W already converted (the copy
// ops/weight_gemm.cpp keeps for a scope): the same values and the same cuBLAS call as gemm<float>(false,
// trans_w, ..., alpha 1) under bf16 precision, without converting W again for every product.
void gemm_bf16_weight(bool trans_w, int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* w, float beta,
                      float* c);
// Round-to-nearest-even conversions (the same rounding as Tensor::to(DType::bf16) on the host).
void float_to_bf16(int64_t n, const float* x, uint16_t* y);
void bf16_to_float(int64_t n, const uint16_t* x, float* y);

}  // namespace luong::cuda
