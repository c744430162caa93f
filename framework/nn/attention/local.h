// What the local variants (Luong et al. 2015, §3.2) share: a score function chosen by name, and the
// window [p_t - D, p_t + D] around an aligned position p_t, clipped to the sentence, inside which the
// alignment a_t = softmax(score) is taken (eq. 7 restricted to the window).
#pragma once
#include <memory>
#include <string>

#include "framework/nn/attention/attention.h"

namespace luong {

class LocalAttention : public Attention {
 public:
  using Attention::prepare;
  AttentionMemory prepare(const Variable& memory, const Tensor& src_mask, std::vector<int64_t> lengths) const override;
  int64_t window() const { return window_; }

 protected:
  LocalAttention(const AttentionOptions& opt, std::string name);
  // (B, S) uint8: 1 where s < length(b) and |s - centers[b]| <= D.
  Tensor window_mask(const AttentionMemory& mem, const std::vector<double>& centers) const;
  // The same from centres (B, 1) on the memory's device, computed there: nothing is read back (local-p's
  // predicted p_t; a captured step cannot read it, an eager GPU step would wait for it every decoder step).
  Tensor window_mask(const AttentionMemory& mem, const Tensor& centers) const;
  // softmax of the scores over the window: h_t (B, H) -> (B, S), zero outside.
  Variable align(const Variable& h_t, const AttentionMemory& mem, const Tensor& window) const;
  // align() and the context over the memory; one fused node (ops attention_step) for dot and general scores.
  AttentionOutput attend_window(const Variable& h_t, const AttentionMemory& mem, const Tensor& window) const;
  const std::string& name() const { return name_; }

 private:
  std::shared_ptr<AttentionScore> score_;
  int64_t window_;
  std::string name_;
};

}  // namespace luong
