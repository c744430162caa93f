#include "models/nmt/greedy.h"

namespace luong::nmt {

std::vector<std::vector<int64_t>> greedy_decode(const NmtModel& model, const Tensor& src,
                                                const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                int64_t max_len) {
  NoGradGuard no_grad;
  const int64_t B = src.size(0), V = model.config().tgt_vocab;
  DecoderState state = model.encode(src, src_lengths);
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(B));
  std::vector<bool> done(static_cast<size_t>(B), false);
  std::vector<int64_t> prev(static_cast<size_t>(B), bos);
  const Device dev = state.feed.device();
  for (int64_t step = 0; step < max_len; ++step) {
    DecodeStep s = model.decode_step(state, Tensor::from_ids(prev, {B}, dev));
    state = std::move(s.state);
    // Read as float in place (a float64 model's values are compared after rounding, which can only merge
    // ties that differ below float precision): no (B, V) vector of doubles per step.
    const Tensor logp = s.log_probs.data().to(Device::cpu()).to(DType::f32);
    const float* lp = logp.data<float>();
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      int64_t best = 0;
      bool nan = lp[b * V] != lp[b * V];
      for (int64_t v = 1; v < V; ++v) {
        nan = nan || lp[b * V + v] != lp[b * V + v];
        if (lp[b * V + v] > lp[b * V + best]) best = v;
      }
      LUONG_CHECK(!nan, "greedy decoding: the model gave NaN log-probabilities at output step ", step,
                  " of sentence ", b, " in this batch; the checkpoint's parameters are probably not finite");
      prev[static_cast<size_t>(b)] = best;
      if (done[static_cast<size_t>(b)]) continue;
      if (best == eos) done[static_cast<size_t>(b)] = true;
      else out[static_cast<size_t>(b)].push_back(best);
      all_done = all_done && done[static_cast<size_t>(b)];
    }
    if (all_done) break;
  }
  return out;
}

}  // namespace luong::nmt
