// Fused optimizer updates over flat buffers: one pass reads the gradient and updates the parameter and its
// state in place. The CUDA backend mirrors these signatures in luong::cuda. Every element is independent,
// so the result is bitwise identical for any thread count.
#pragma once
#include <cstdint>

namespace luong::cpu {

// Every update reads grad scaled by grad_scale: the trainer's token average and clip factor
// (optim/average_and_clip.h) applied in the update's own pass instead of a pass of its own over the gradient.
// The file is compiled without FMA contraction (CMakeLists.txt), so grad_scale * grad is rounded on its own:
// the update has the bits of one on a gradient scaled beforehand, and with grad_scale 1 the product is exact.
// The CUDA kernels (optim.cu, built with --fmad=false) round the same operations, so the devices agree bitwise.
//
// SGD with optional heavy-ball momentum and L2 weight decay added to the gradient:
//   g = grad_scale * grad + weight_decay * param
//   m = momentum * m + g;  g = m          (only when m != nullptr; m starts at zero)
//   param -= lr * g
// param, grad, m: (n,)
template <class T>
void sgd_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T lr, T momentum, T weight_decay);

// Adam (Kingma & Ba 2015, Algorithm 1) with optional weight decay:
//   g = grad_scale * grad + (decoupled ? 0 : weight_decay * param)          (coupled: L2 in the gradient)
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
//   param -= lr * ((m / bias_correction1) / (sqrt(v / bias_correction2) + eps)
//                  + (decoupled ? weight_decay * param : 0))     (decoupled: AdamW, Loshchilov & Hutter)
// bias_correction_k = 1 - beta_k^t for the t-th update (t from 1). param, grad, m, v: (n,)
template <class T>
void adam_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T* v, T lr, T beta1, T beta2, T eps,
                 T weight_decay, bool decoupled, T bias_correction1, T bias_correction2);

// Exponential moving average of the parameters (optim/weight_average.h): average += weight * (param - average),
// weight = 1 - decay. Written as a step towards the parameter, so an average equal to it stays bit for bit equal.
// average, param: (n,)
template <class T>
void ema_update(int64_t n, T* average, const T* param, T weight);

// Exchanges the values of a and b (the averaged weights in and out of the model's buffer without a third copy).
// a, b: (n,)
template <class T>
void swap_values(int64_t n, T* a, T* b);

}  // namespace luong::cpu
