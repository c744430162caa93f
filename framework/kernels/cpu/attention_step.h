// Fused global attention for one decoder step (ops/attention_step.cpp). For every batch row b:
//   s_j = q_b · k_bj over the source positions j with mask_bj = 1,  a_b = softmax(s)  (0 where masked),
//   c_b = Σ_j a_bj v_bj.
// One pass per row instead of the composed path's two batched matrix-vector products (a cblas call per row
// each), a masked softmax and four reshapes, forward and backward.
#pragma once
#include <cstdint>

namespace luong::cpu {

// q (B, H), k and v (B, S, H), mask (B, S) uint8 or null (no padding) -> weights (B, S), context (B, H).
// A fully masked row gets zero weights and a zero context (as softmax_forward).
template <class T>
void attention_step_forward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                            const uint8_t* mask, T* weights, T* context);

// Accumulates (+=) dq (B, H), dk and dv (B, S, H) from gc (B, H) and gw (B, S), the gradients of the context
// and of the weights; either of those may be null (no gradient reached it), as may any of dq, dk, dv (not
// needed). dk and dv may be the same buffer (keys and values one tensor).
template <class T>
void attention_step_backward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                             const T* weights, const T* gc, const T* gw, T* dq, T* dk, T* dv);

}  // namespace luong::cpu
