// local-p (Luong et al. 2015, §3.2, predictive alignment):
//   p_t = S · sigmoid(v_pᵀ tanh(W_p h_t))                       (eq. 9; S = this sentence's source length)
//   a_t(s) = align(h_t, h̄_s) · exp(-(s - p_t)² / (2σ²)), σ = D/2 (eq. 10)
// align is the softmax of the scores over the window {s : |s - p_t| <= D} clipped to the sentence. The
// window's edges are not differentiable; p_t still learns through the Gaussian, as in the paper.
#include "framework/nn/attention/local.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

class LocalPAttention : public LocalAttention {
 public:
  explicit LocalPAttention(const AttentionOptions& o)
      : LocalAttention(o, "local-p"),
        weight_p_(register_parameter("weight_p", {o.hidden_size, o.hidden_size}, o.dtype)),
        v_p_(register_parameter("v_p", {o.hidden_size, 1}, o.dtype)) {}

  AttentionOutput attend(const Variable& h_t, const AttentionMemory& mem, int64_t t) const override {
    check_attention_inputs("local-p", h_t, mem);
    const int64_t B = mem.memory.size(0), S = mem.memory.size(1);
    const DType dt = h_t.dtype();
    const Device dev = h_t.device();
    std::vector<double> len(mem.lengths.begin(), mem.lengths.end()), pos(static_cast<size_t>(B * S));
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<double>(static_cast<int64_t>(i) % S);

    // p_t (B, 1), eq. 9
    Variable p = mul(sigmoid(matmul(tanh(matmul(h_t, weight_p_)), v_p_)), Variable(Tensor::from(len, {B, 1}, dt, dev)));
    Variable align_w = align(h_t, mem, window_mask(mem, p.data()));  // (B, S), made on the device

    // Gaussian centred on p_t, eq. 10: p_t is spread over (B, S) with a GEMM against a row of ones.
    const double sigma = static_cast<double>(window()) / 2.0;
    Variable p_wide = matmul(p, Variable(Tensor::full({1, S}, 1.0, dt, dev)));
    Variable d = sub(Variable(Tensor::from(pos, {B, S}, dt, dev)), p_wide);
    Variable gauss = exp(mul_scalar(mul(d, d), -1.0 / (2.0 * sigma * sigma)));
    Variable weights = mul(align_w, gauss);
    return {attention_context(weights, mem.memory), weights};
  }

 private:
  Variable weight_p_;  // (H, H): W_p
  Variable v_p_;       // (H, 1): v_p
};

}  // namespace

LUONG_REGISTER_ATTENTION("local-p", LocalPAttention, "local attention, predicted p_t with a Gaussian (window D)");

}  // namespace luong
