// Global attention (Luong et al. 2015, §3.1): a_t = softmax over all source positions of score(h_t, h̄_s)
// (eq. 7), padding masked. One class serves every score function; each score file registers its variant.
#include "framework/nn/attention/attention.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

class GlobalAttention : public Attention {
 public:
  GlobalAttention(std::shared_ptr<AttentionScore> score, std::string name)
      : score_(register_module("score", std::move(score))), name_(std::move(name)) {}

  using Attention::prepare;
  AttentionMemory prepare(const Variable& memory, const Tensor& src_mask, std::vector<int64_t> lengths) const override {
    AttentionMemory mem = Attention::prepare(memory, src_mask, std::move(lengths));
    mem.keys = score_->prepare(memory);
    return mem;
  }

  AttentionOutput attend(const Variable& h_t, const AttentionMemory& mem, int64_t t) const override {
    check_attention_inputs(name_.c_str(), h_t, mem);
    // dot and general: score, masked softmax and context as one node (ops/attention_step.cpp).
    if (Variable q = score_->query(h_t); q.defined()) {
      AttentionStep a = attention_step(q, mem.keys, mem.memory, mem.mask);
      return {a.context, a.weights};
    }
    Variable weights = softmax(score_->score(h_t, mem.keys), mem.mask);  // (B, S)
    return {attention_context(weights, mem.memory), weights};
  }

 private:
  std::shared_ptr<AttentionScore> score_;
  std::string name_;
};

}  // namespace

bool register_global_attention(const std::string& name, AttentionScoreFactory score, const std::string& help) {
  AttentionFactory f = [name, score](const AttentionOptions& o) -> std::shared_ptr<Attention> {
    return std::make_shared<GlobalAttention>(score(o), name);
  };
  return AttentionRegistry::instance().add(name, f, help);
}

}  // namespace luong
