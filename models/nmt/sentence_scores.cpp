#include "models/nmt/sentence_scores.h"

#include <algorithm>

#include "models/nmt/data/batch.h"
#include "models/nmt/ensemble_loss.h"
#include "models/nmt/nmt_task.h"

namespace luong::nmt {

std::vector<PairScore> score_pairs(const Ensemble& models, const Corpus& corpus, int64_t batch_size, Device device,
                                   const std::function<void(size_t done)>& done) {
  LUONG_CHECK(batch_size > 0, "score_pairs: batch size ", batch_size);
  for (const Example& e : corpus.examples)
    LUONG_CHECK(!e.src.empty(), "score_pairs: the pair of line ", e.line, " has an empty source");
  NoGradGuard no_grad;
  const std::vector<int64_t> order = evaluation_order(corpus);
  const int64_t n = static_cast<int64_t>(order.size()), pad = models.config().pad_id;
  std::vector<PairScore> scores(order.size());
  std::vector<double> per_member(models.size());
  for (int64_t start = 0; start < n; start += batch_size) {
    const std::vector<int64_t> idx(order.begin() + start, order.begin() + std::min(n, start + batch_size));
    const Batch b = make_batch(corpus, idx);
    const std::vector<int64_t> lengths(b.src_lengths.data<int64_t>(),
                                       b.src_lengths.data<int64_t>() + b.src_lengths.numel());
    std::vector<std::vector<double>> member_lp;
    for (size_t i = 0; i < models.size(); ++i)
      member_lp.push_back(target_log_probs(models.member(i), b, lengths, device));
    const int64_t B = b.tgt_out.size(0), T = b.tgt_out.size(1);
    const int64_t* tgt = b.tgt_out.data<int64_t>();
    // Each sentence summed in target order, in double: its score does not depend on its batch's other rows.
    for (int64_t r = 0; r < B; ++r) {
      PairScore& s = scores[static_cast<size_t>(idx[static_cast<size_t>(r)])];
      for (int64_t t = 0; t < T && tgt[r * T + t] != pad; ++t) {
        const size_t row = static_cast<size_t>(t * B + r);
        if (models.size() == 1) {
          s.log_prob += member_lp[0][row];
        } else {
          for (size_t i = 0; i < models.size(); ++i) per_member[i] = member_lp[i][row];
          s.log_prob += mean_probability_log(per_member);
        }
        ++s.tokens;
      }
    }
    if (done) done(static_cast<size_t>(start) + idx.size());
  }
  return scores;
}

}  // namespace luong::nmt
