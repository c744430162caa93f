#include "models/nmt/ensemble_loss.h"

#include <algorithm>

#include "models/nmt/data/batch.h"
#include "models/nmt/nmt_task.h"

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
  LUONG_CHECK(batch_size > 0, "evaluate_loss: batch size ", batch_size);
  NoGradGuard no_grad;
  const std::vector<int64_t> order = evaluation_order(corpus);
  const int64_t n = static_cast<int64_t>(order.size()), pad = models.config().pad_id;
  ValidationResult total;
  std::vector<double> per_member(models.size());
  for (int64_t start = 0; start < n; start += batch_size) {
    const std::vector<int64_t> idx(order.begin() + start, order.begin() + std::min(n, start + batch_size));
    const Batch b = make_batch(corpus, idx);
    std::vector<int64_t> lengths(static_cast<size_t>(b.src_lengths.numel()));
    std::copy_n(b.src_lengths.data<int64_t>(), lengths.size(), lengths.begin());
    std::vector<std::vector<double>> member_lp;
    for (size_t i = 0; i < models.size(); ++i)
      member_lp.push_back(target_log_probs(models.member(i), b, lengths, device));
    const int64_t B = b.tgt_out.size(0), T = b.tgt_out.size(1);
    const int64_t* tgt = b.tgt_out.data<int64_t>();
    for (int64_t t = 0; t < T; ++t)
      for (int64_t r = 0; r < B; ++r) {
        if (tgt[r * T + t] == pad) continue;
        for (size_t i = 0; i < models.size(); ++i) per_member[i] = member_lp[i][static_cast<size_t>(t * B + r)];
        total.loss_sum -= mean_probability_log(per_member);
        ++total.tokens;
      }
  }
  return total;
}

}  // namespace luong::nmt
