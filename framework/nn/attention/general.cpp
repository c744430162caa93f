// score(h_t, h̄_s) = h_tᵀ W_a h̄_s (Luong et al. 2015, eq. 8, "general"). Computed as (h_tᵀ W_a) h̄_s: one
// (B, H) x (H, H) GEMM per step instead of transforming all S source states.
#include "framework/nn/attention/attention.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

class GeneralScore : public AttentionScore {
 public:
  explicit GeneralScore(const AttentionOptions& o)
      : weight_(register_parameter("weight", {o.hidden_size, o.hidden_size}, o.dtype)) {}
  // keys = memory (B, S, H); h_t (B, H) -> (B, S)
  Variable score(const Variable& h_t, const Variable& keys) const override { return dot_scores(keys, query(h_t)); }
  Variable query(const Variable& h_t) const override { return matmul(h_t, weight_); }

 private:
  Variable weight_;  // (H, H): W_a
};

}  // namespace

LUONG_REGISTER_ATTENTION_SCORE("general", GeneralScore, "h_t^T W_a h_s");

}  // namespace luong
