// score(h_t, h̄_s) = v_aᵀ tanh(W_a [h_t; h̄_s]) (Luong et al. 2015, eq. 8, "concat").
// W_a [h_t; h̄_s] = W_h h_t + W_s h̄_s: the source half is computed once per batch in prepare(), and the keys
// are kept time-major (S, B, H) so the per-step (B, H) query broadcasts over them.
#include "framework/nn/attention/attention.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

class ConcatScore : public AttentionScore {
 public:
  explicit ConcatScore(const AttentionOptions& o)
      : hidden_(o.hidden_size),
        weight_(register_parameter("weight", {2 * o.hidden_size, o.hidden_size}, o.dtype)),
        v_(register_parameter("v", {o.hidden_size, 1}, o.dtype)) {}

  // memory (B, S, H) -> keys (S, B, H) = h̄_s W_s
  Variable prepare(const Variable& memory) const override {
    return transpose(matmul(memory, slice(weight_, 0, hidden_, hidden_)), 0, 1);
  }
  // h_t (B, H) -> (B, S)
  Variable score(const Variable& h_t, const Variable& keys) const override {
    const int64_t S = keys.size(0), B = keys.size(1);
    Variable query = matmul(h_t, slice(weight_, 0, 0, hidden_));  // (B, H)
    Variable e = matmul(tanh(add(keys, query)), v_);              // (S, B, 1)
    return transpose(reshape(e, {S, B}), 0, 1);
  }

 private:
  int64_t hidden_;
  Variable weight_;  // (2H, H): W_a for the input [h_t; h̄_s]
  Variable v_;       // (H, 1): v_a
};

}  // namespace

LUONG_REGISTER_ATTENTION_SCORE("concat", ConcatScore, "v_a^T tanh(W_a [h_t; h_s])");

}  // namespace luong
