// Several trained models decoded as one. Luong et al. (2015) report their best results with an ensemble of
// 8 models; each member here is a checkpoint of the same vocabularies (any size, attention or depth).
//
// The ensemble's next-token distribution is the mean of the members' probabilities,
//   log p(y) = log( (1/M) sum_i p_i(y) ),
// a proper distribution: its perplexity means what a single model's does, and by Jensen's inequality it is
// never above the mean of the members' per-token losses. The attention the decoders report (unknown-word
// replacement, plots) is the first member's. One member decodes exactly as that model alone.
#pragma once
#include <cstddef>
#include <vector>

#include "models/nmt/model.h"

namespace luong::nmt {

struct EnsembleState {
  std::vector<DecoderState> members;
};

struct EnsembleStep {
  Variable log_probs;   // (B, V): the mixture's
  EnsembleState state;  // after this step
  Variable attention;   // (B, S): the first member's weights this step
};

class Ensemble {
 public:
  // The members must outlive the ensemble and agree on the target vocabulary size and padding id.
  explicit Ensemble(std::vector<const NmtModel*> members);
  explicit Ensemble(const NmtModel& model);

  // The step-wise API of NmtModel, for every member at once (no dropout: decoding only).
  EnsembleState encode(const Tensor& src, const std::vector<int64_t>& src_lengths) const;
  EnsembleStep decode_step(const EnsembleState& state, const Tensor& prev_tokens) const;
  EnsembleState select_rows(const EnsembleState& state, const std::vector<int64_t>& rows) const;

  // The first member's: the target side (vocabulary, padding) is the same for all.
  const ModelConfig& config() const { return members_.front()->config(); }
  size_t size() const { return members_.size(); }
  const NmtModel& member(size_t i) const { return *members_.at(i); }

 private:
  std::vector<const NmtModel*> members_;
};

// log((1/M) sum_i exp(x_i)) of M log-probabilities, computed without overflow or underflow (in double).
double mean_probability_log(const std::vector<double>& log_probs);

}  // namespace luong::nmt
