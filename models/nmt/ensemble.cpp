#include "models/nmt/ensemble.h"

#include <algorithm>
#include <cmath>

#include "framework/core/error.h"

namespace luong::nmt {

Ensemble::Ensemble(std::vector<const NmtModel*> members) : members_(std::move(members)) {
  LUONG_CHECK(!members_.empty(), "an ensemble needs at least one model");
  for (size_t i = 0; i < members_.size(); ++i) {
    LUONG_CHECK(members_[i] != nullptr, "ensemble member ", i + 1, " is missing");
    const ModelConfig& c = members_[i]->config();
    LUONG_CHECK(c.tgt_vocab == config().tgt_vocab && c.pad_id == config().pad_id, "ensemble member ", i + 1,
                " has a target vocabulary of ", c.tgt_vocab, " tokens, member 1 of ", config().tgt_vocab,
                ": the members must share their vocabularies");
  }
}

Ensemble::Ensemble(const NmtModel& model) : Ensemble(std::vector<const NmtModel*>{&model}) {}

EnsembleState Ensemble::encode(const Tensor& src, const std::vector<int64_t>& src_lengths) const {
  EnsembleState s;
  for (const NmtModel* m : members_) s.members.push_back(m->encode(src, src_lengths));
  return s;
}

EnsembleStep Ensemble::decode_step(const EnsembleState& state, const Tensor& prev_tokens) const {
  EnsembleStep out;
  if (members_.size() == 1) {  // exactly the model alone: no re-normalisation round trip
    DecodeStep s = members_.front()->decode_step(state.members.front(), prev_tokens);
    out.log_probs = std::move(s.log_probs);
    out.attention = std::move(s.attention);
    out.state.members.push_back(std::move(s.state));
    return out;
  }
  // The mixture on the device: log(sum_i exp(log p_i)) - log M. A token less likely than ~1e-45 under every
  // member becomes -inf (float underflow): it is never among the tokens a decoder picks.
  Variable sum;
  for (size_t i = 0; i < members_.size(); ++i) {
    DecodeStep s = members_[i]->decode_step(state.members[i], prev_tokens);
    const Variable p = exp(s.log_probs);
    sum = i == 0 ? p : add(sum, p);
    if (i == 0) out.attention = std::move(s.attention);
    out.state.members.push_back(std::move(s.state));
  }
  out.log_probs = add_scalar(log(sum), -std::log(static_cast<double>(members_.size())));
  return out;
}

EnsembleState Ensemble::select_rows(const EnsembleState& state, const std::vector<int64_t>& rows) const {
  EnsembleState out;
  for (size_t i = 0; i < members_.size(); ++i) out.members.push_back(members_[i]->select_rows(state.members[i], rows));
  return out;
}

double mean_probability_log(const std::vector<double>& log_probs) {
  LUONG_CHECK(!log_probs.empty(), "mean_probability_log of no values");
  const double top = *std::max_element(log_probs.begin(), log_probs.end());
  if (std::isinf(top)) return top;  // all -inf (or a +inf, which no log-probability is)
  double sum = 0.0;
  for (const double x : log_probs) sum += std::exp(x - top);
  return top + std::log(sum / static_cast<double>(log_probs.size()));
}

}  // namespace luong::nmt
