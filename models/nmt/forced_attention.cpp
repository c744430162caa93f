#include "models/nmt/forced_attention.h"

#include <algorithm>

#include "framework/autograd/variable.h"
#include "models/nmt/data/batch.h"
#include "models/nmt/nmt_task.h"

namespace luong::nmt {

std::vector<std::vector<std::vector<float>>> forced_attention(const Ensemble& models, const Corpus& corpus,
                                                              int64_t batch_size, Device device,
                                                              const std::function<void(size_t done)>& done) {
  LUONG_CHECK(batch_size > 0, "forced_attention: batch size ", batch_size);
  for (const Example& e : corpus.examples)
    LUONG_CHECK(!e.src.empty(), "forced_attention: the pair of line ", e.line, " has an empty source");
  NoGradGuard no_grad;
  const std::vector<int64_t> order = evaluation_order(corpus);
  const int64_t n = static_cast<int64_t>(order.size());
  std::vector<std::vector<std::vector<float>>> out(order.size());
  for (int64_t start = 0; start < n; start += batch_size) {
    const std::vector<int64_t> idx(order.begin() + start, order.begin() + std::min(n, start + batch_size));
    const Batch b = make_batch(corpus, idx);
    const int64_t B = b.tgt_in.size(0), T = b.tgt_in.size(1);
    const int64_t* src_len = b.src_lengths.data<int64_t>();
    const int64_t* tgt_len = b.tgt_lengths.data<int64_t>();
    const int64_t* tgt_in = b.tgt_in.data<int64_t>();
    EnsembleState state = models.encode(b.src.to(device), std::vector<int64_t>(src_len, src_len + B));
    std::vector<int64_t> prev(static_cast<size_t>(B));
    for (int64_t t = 0; t < T; ++t) {
      // Rows past their target's end read padding; their weights are not kept.
      for (int64_t r = 0; r < B; ++r) prev[static_cast<size_t>(r)] = tgt_in[r * T + t];
      EnsembleStep step = models.decode_step(state, Tensor::from_ids(prev, {B}, device));
      const Tensor att = step.attention.data().to(Device::cpu()).to(DType::f32);  // (B, S)
      const int64_t S = att.size(1);
      const float* a = att.data<float>();
      for (int64_t r = 0; r < B; ++r)
        if (t < tgt_len[r])
          out[static_cast<size_t>(idx[static_cast<size_t>(r)])].emplace_back(a + r * S, a + r * S + src_len[r]);
      state = std::move(step.state);
    }
    if (done) done(static_cast<size_t>(start) + idx.size());
  }
  return out;
}

}  // namespace luong::nmt
