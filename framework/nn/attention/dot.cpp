// score(h_t, h̄_s) = h_tᵀ h̄_s (Luong et al. 2015, eq. 8, "dot"). No parameters.
#include "framework/nn/attention/attention.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

class DotScore : public AttentionScore {
 public:
  explicit DotScore(const AttentionOptions&) {}
  // keys = memory (B, S, H); h_t (B, H) -> (B, S)
  Variable score(const Variable& h_t, const Variable& keys) const override { return dot_scores(keys, query(h_t)); }
  Variable query(const Variable& h_t) const override { return h_t; }
};

}  // namespace

LUONG_REGISTER_ATTENTION_SCORE("dot", DotScore, "h_t^T h_s");

}  // namespace luong
