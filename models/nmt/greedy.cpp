#include "models/nmt/greedy.h"

#include "framework/ops/weight_gemm.h"
#include "models/nmt/top_tokens.h"

namespace luong::nmt {

std::vector<std::vector<int64_t>> greedy_decode(const NmtModel& model, const Tensor& src,
                                                const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                int64_t max_len) {
  return greedy_decode(Ensemble(model), src, src_lengths, bos, eos, max_len);
}

std::vector<std::vector<int64_t>> greedy_decode(const Ensemble& model, const Tensor& src,
                                                const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                int64_t max_len) {
  NoGradGuard no_grad;
  PackedWeightScope packed_weights;  // every step multiplies by the same weights: pack them once
  const int64_t B = src.size(0), V = model.config().tgt_vocab;
  EnsembleState state = model.encode(src, src_lengths);
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(B));
  std::vector<bool> done(static_cast<size_t>(B), false);
  std::vector<int64_t> prev(static_cast<size_t>(B), bos);
  const Device dev = src.device();
  std::vector<std::pair<float, int64_t>> best;  // reused
  const std::vector<int64_t> excluded = never_output_tokens(model.config().pad_id, bos);
  for (int64_t step = 0; step < max_len; ++step) {
    EnsembleStep s = model.decode_step(state, Tensor::from_ids(prev, {B}, dev));
    state = std::move(s.state);
    // Read as float in place (a float64 model's values are compared after rounding, which can only merge
    // ties that differ below float precision): no (B, V) vector of doubles per step.
    const Tensor logp = s.log_probs.data().to(Device::cpu()).to(DType::f32);
    const float* lp = logp.data<float>();
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      top_tokens(lp + b * V, V, 1, best, "greedy decoding", step, b, excluded);  // the first maximum
      const int64_t token = best.front().second;
      prev[static_cast<size_t>(b)] = token;
      if (done[static_cast<size_t>(b)]) continue;
      if (token == eos) done[static_cast<size_t>(b)] = true;
      else out[static_cast<size_t>(b)].push_back(token);
      all_done = all_done && done[static_cast<size_t>(b)];
    }
    if (all_done) break;
  }
  return out;
}

}  // namespace luong::nmt
