#include "models/nmt/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/core/philox.h"
#include "framework/ops/weight_gemm.h"
#include "models/nmt/top_tokens.h"

namespace luong::nmt {
namespace {

struct Draw {
  Hypothesis hyp;
  bool done = false;
};

}  // namespace

double sampling_uniform(uint64_t seed, uint64_t sentence, uint64_t sample, uint64_t step) {
  // Steps and samples in the low counter word, the sentence in the high one: distinct for every draw of up to
  // 2^32 steps and 2^32 samples.
  const Philox4x32 r = philox4x32_10((sample << 32) | (step & 0xFFFFFFFFu), sentence, seed);
  const uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 21) ^ (r.v[1] >> 11);  // 53 random bits
  return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * 0x1.0p-53;
}

int64_t sample_token(const float* row, int64_t V, const SamplingOptions& o, double uniform,
                     const std::vector<int64_t>& excluded, int64_t step, int64_t sentence) {
  // The candidates and their order of summation (fixed, so a draw depends on the row and the uniform alone):
  // with top_k, the k best as top_tokens ranks them (it refuses a NaN); without, every token in id order, in
  // one pass (no sort of a 50,000-word row per sentence and step).
  thread_local std::vector<std::pair<float, int64_t>> candidates;
  if (o.top_k > 0) {
    top_tokens(row, V, static_cast<size_t>(std::min(o.top_k, V)), candidates, "sampling", step, sentence, excluded);
  } else {
    candidates.clear();
    bool has_nan = false;
    for (int64_t v = 0; v < V; ++v) {
      has_nan = has_nan || std::isnan(row[v]);
      if (std::find(excluded.begin(), excluded.end(), v) == excluded.end()) candidates.emplace_back(row[v], v);
    }
    require_no_nan(has_nan, "sampling", step, sentence);
  }
  float best = -std::numeric_limits<float>::infinity();
  for (const auto& c : candidates) best = std::max(best, c.first);
  LUONG_CHECK(std::isfinite(best), "sampling: output step ", step, " of sentence ", sentence,
              " has no token with a finite log-probability");
  const double inv_t = 1.0 / o.temperature;
  thread_local std::vector<double> cumulative;
  cumulative.clear();
  double total = 0.0;
  for (const auto& c : candidates) {
    // exp((lp - best) / T) <= 1: no overflow at any temperature; -inf weighs 0.
    total += std::exp((static_cast<double>(c.first) - static_cast<double>(best)) * inv_t);
    cumulative.push_back(total);
  }
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), uniform * total);
  // (uniform < 1, so the end is reached only through rounding: the last token with weight then.)
  size_t index = it == cumulative.end() ? cumulative.size() - 1 : static_cast<size_t>(it - cumulative.begin());
  while (index > 0 && cumulative[index] == cumulative[index - 1]) --index;  // never a token of weight 0
  return candidates[index].second;
}

std::vector<std::vector<Hypothesis>> sample_translations(const Ensemble& model, const Tensor& src,
                                                         const std::vector<int64_t>& src_lengths, int64_t bos,
                                                         int64_t eos, const BeamOptions& o,
                                                         const SamplingOptions& sampling,
                                                         const std::vector<uint64_t>& sentence_ids) {
  LUONG_CHECK(std::isfinite(sampling.temperature) && sampling.temperature > 0,
              "sampling: the temperature must be a finite number > 0, got ", sampling.temperature);
  LUONG_CHECK(sampling.top_k >= 0, "sampling: top_k must be >= 0, got ", sampling.top_k);
  LUONG_CHECK(o.n_best >= 1, "sampling: n_best (samples per sentence) must be >= 1, got ", o.n_best);
  const int64_t B = src.size(0), N = o.n_best;
  LUONG_CHECK(static_cast<int64_t>(sentence_ids.size()) == B, "sampling: ", sentence_ids.size(), " sentence ids for ",
              B, " sentences");
  NoGradGuard no_grad;
  PackedWeightScope packed_weights;  // every step multiplies by the same weights: pack them once
  const Device device = src.device();
  // Row b * N + n is sample n of sentence b; each row decodes on its own until </s> or the sentence's limit.
  std::vector<int64_t> rows(static_cast<size_t>(B * N)), max_len(static_cast<size_t>(B));
  for (int64_t i = 0; i < B * N; ++i) rows[static_cast<size_t>(i)] = i / N;
  for (int64_t b = 0; b < B; ++b)
    max_len[static_cast<size_t>(b)] = output_length_limit(o, src_lengths[static_cast<size_t>(b)]);
  EnsembleState state = model.select_rows(model.encode(src, src_lengths), rows);
  std::vector<Draw> draws(static_cast<size_t>(B * N));
  std::vector<int64_t> prev(static_cast<size_t>(B * N), bos);
  const std::vector<int64_t> excluded = never_output_tokens(model.config().pad_id, bos);
  for (int64_t t = 0;; ++t) {
    if (std::all_of(draws.begin(), draws.end(), [](const Draw& d) { return d.done; })) break;
    if (o.stop && o.stop()) throw DecodingStopped();
    EnsembleStep step = model.decode_step(state, Tensor::from_ids(prev, {B * N}, device));
    state = std::move(step.state);
    const Tensor logp = step.log_probs.data().to(Device::cpu()).to(DType::f32);
    const int64_t V = logp.size(1);
    Tensor att;
    if (o.keep_attention) att = step.attention.data().to(Device::cpu()).to(DType::f32);
    for (int64_t r = 0; r < B * N; ++r) {
      Draw& d = draws[static_cast<size_t>(r)];
      if (d.done) continue;  // its row still decodes (fixed batch shape); its draws are not used
      const int64_t b = r / N, n = r % N;
      const float* row = logp.data<float>() + r * V;
      const double u = sampling_uniform(sampling.seed, sentence_ids[static_cast<size_t>(b)], static_cast<uint64_t>(n),
                                        static_cast<uint64_t>(t));
      const int64_t token = sample_token(row, V, sampling, u, excluded, t, b);
      d.hyp.log_prob += static_cast<double>(row[token]);
      if (o.keep_attention) {
        const float* a = att.data<float>() + r * att.size(1);
        d.hyp.attention.emplace_back(a, a + src_lengths[static_cast<size_t>(b)]);
      }
      const bool ended = token == eos;
      if (!ended) d.hyp.tokens.push_back(token);
      prev[static_cast<size_t>(r)] = token;
      if (ended || t + 1 >= max_len[static_cast<size_t>(b)]) {
        d.done = true;
        const int64_t len = static_cast<int64_t>(d.hyp.tokens.size()) + (ended ? 1 : 0);
        d.hyp.score = d.hyp.log_prob / gnmt_length_norm(len, o.length_penalty);
      }
    }
  }
  std::vector<std::vector<Hypothesis>> out(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    auto& samples = out[static_cast<size_t>(b)];
    for (int64_t n = 0; n < N; ++n) samples.push_back(std::move(draws[static_cast<size_t>(b * N + n)].hyp));
    std::stable_sort(samples.begin(), samples.end(),
                     [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
  }
  return out;
}

}  // namespace luong::nmt
