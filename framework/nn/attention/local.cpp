#include "framework/nn/attention/local.h"

#include <cmath>

#include "framework/kernels/dispatch.h"
#include "framework/ops/ops.h"

namespace luong {

LocalAttention::LocalAttention(const AttentionOptions& opt, std::string name)
    : window_(opt.window), name_(std::move(name)) {
  LUONG_CHECK(window_ >= 1, "attention '", name_, "': window D must be >= 1, got ", window_);
  score_ = register_module("score", make_attention_score(opt.score, opt));
}

AttentionMemory LocalAttention::prepare(const Variable& memory, const Tensor& src_mask,
                                        std::vector<int64_t> lengths) const {
  AttentionMemory mem = Attention::prepare(memory, src_mask, std::move(lengths));
  mem.keys = score_->prepare(memory);
  return mem;
}

Tensor LocalAttention::window_mask(const AttentionMemory& mem, const std::vector<double>& centers) const {
  const int64_t B = mem.memory.size(0), S = mem.memory.size(1);
  std::vector<double> m(static_cast<size_t>(B * S), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < mem.lengths[static_cast<size_t>(b)]; ++s)
      if (std::abs(static_cast<double>(s) - centers[static_cast<size_t>(b)]) <= static_cast<double>(window_))
        m[static_cast<size_t>(b * S + s)] = 1.0;
  return Tensor::from(m, {B, S}, DType::u8, mem.memory.device());
}

Tensor LocalAttention::window_mask(const AttentionMemory& mem, const Tensor& centers) const {
  const int64_t B = mem.memory.size(0), S = mem.memory.size(1);
  LUONG_CHECK(centers.numel() == B && centers.device() == mem.mask.device(), "attention '", name_, "': ",
              centers.describe(), " are not the ", B, " window centres on ", mem.mask.device());
  Tensor out = Tensor::empty({B, S}, DType::u8, mem.mask.device());
  dispatch_float(centers.dtype(), "window_mask", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(out.device(), window_mask<T>, B, S, centers.data<T>(), mem.mask.data<uint8_t>(),
                 static_cast<double>(window_), out.data<uint8_t>());
  });
  return out;
}

Variable LocalAttention::align(const Variable& h_t, const AttentionMemory& mem, const Tensor& window) const {
  return softmax(score_->score(h_t, mem.keys), window);
}

AttentionOutput LocalAttention::attend_window(const Variable& h_t, const AttentionMemory& mem,
                                              const Tensor& window) const {
  if (Variable q = score_->query(h_t); q.defined()) {
    AttentionStep a = attention_step(q, mem.keys, mem.memory, window);
    return {a.context, a.weights};
  }
  Variable weights = align(h_t, mem, window);
  return {attention_context(weights, mem.memory), weights};
}

}  // namespace luong
