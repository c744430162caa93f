#include "models/nmt/ensemble_loss.h"

#include <algorithm>

#include "models/nmt/data/batch.h"
#include "models/nmt/nmt_task.h"

namespace luong::nmt {
namespace {

// Each target position's log-probability under `model`, time-major (row t * B + b), pad positions included.
std::vector<double> target_log_probs(const NmtModel& model, const Batch& b, const std::vector<int64_t>& lengths,
                                     Device device) {
  const Variable logits = model.forward(b.src.to(device), lengths, b.tgt_in.to(device), nullptr);  // (T * B, V)
  const Tensor lp = log_softmax(logits).data().to(Device::cpu()).to(DType::f32);
  const int64_t B = b.tgt_out.size(0), T = b.tgt_out.size(1), V = lp.size(1);
  const int64_t* tgt = b.tgt_out.data<int64_t>();
  const float* p = lp.data<float>();
  std::vector<double> out(static_cast<size_t>(T * B));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < B; ++r) out[static_cast<size_t>(t * B + r)] = p[(t * B + r) * V + tgt[r * T + t]];
  return out;
}

}  // namespace

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
