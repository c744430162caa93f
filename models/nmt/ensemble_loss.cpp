#include "models/nmt/ensemble_loss.h"

#include "models/nmt/data/batch.h"
#include "models/nmt/nmt_task.h"
#include "models/nmt/sentence_scores.h"

namespace luong::nmt {

// The fused generator loss gives the log-probabilities per row, so no (T * B, V) tensor of them is formed (at a
// 50,000-word vocabulary and 32 x 50 positions that was 320 MB per member and batch, then a host copy).
std::vector<double> target_log_probs(const NmtModel& model, const Batch& b, const std::vector<int64_t>& lengths,
                                     Device device) {
  const CrossEntropy ce =
      model.forward_loss(b.src.to(device), lengths, b.tgt_in.to(device), b.tgt_out.to(device), 0.0, nullptr);
  const Tensor losses = ce.row_losses.to(Device::cpu()).to(DType::f64);
  const double* p = losses.data<double>();
  std::vector<double> out(static_cast<size_t>(losses.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = -p[i];
  return out;
}

ValidationResult evaluate_loss(const Ensemble& models, const Corpus& corpus, int64_t batch_size, Device device) {
  if (models.size() == 1) return evaluate_loss(models.member(0), corpus, batch_size, device);
  // The mixture's loss per token is what score_pairs sums per pair (in the same batches): the pairs' scores add up
  // to it.
  ValidationResult total;
  for (const PairScore& s : score_pairs(models, corpus, batch_size, device)) {
    total.loss_sum -= s.log_prob;
    total.tokens += s.tokens;
  }
  return total;
}

}  // namespace luong::nmt
