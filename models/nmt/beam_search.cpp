#include "models/nmt/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/ops/weight_gemm.h"
#include "models/nmt/top_tokens.h"

namespace luong::nmt {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Beam {
  std::vector<int64_t> tokens;
  double log_prob = 0.0;
  std::vector<std::vector<float>> attention;
};

struct Candidate {
  double log_prob;
  int64_t beam;   // index within the sentence's K beams
  int64_t token;
};

struct SentenceSearch {
  std::vector<Beam> beams;  // K entries; a beam with log_prob -inf is a placeholder
  std::vector<Hypothesis> finished;
  int64_t max_len = 0;
  bool done = false;
};

void finish(SentenceSearch& s, Beam beam, double alpha, bool ended_with_eos) {
  Hypothesis h;
  h.log_prob = beam.log_prob;
  const int64_t len = static_cast<int64_t>(beam.tokens.size()) + (ended_with_eos ? 1 : 0);
  h.score = beam.log_prob / gnmt_length_norm(len, alpha);
  h.tokens = std::move(beam.tokens);
  h.attention = std::move(beam.attention);
  s.finished.push_back(std::move(h));
}

}  // namespace

int64_t output_length_limit(const BeamOptions& o, int64_t src_length) {
  if (o.max_len > 0) return o.max_len;
  return static_cast<int64_t>(std::max<double>(1.0, o.max_len_ratio * static_cast<double>(src_length))) + 1;
}

double gnmt_length_norm(int64_t len, double alpha) {
  return alpha == 0.0 ? 1.0 : std::pow((5.0 + static_cast<double>(len)) / 6.0, alpha);
}

std::vector<std::vector<Hypothesis>> beam_search(const NmtModel& model, const Tensor& src,
                                                 const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                 const BeamOptions& o) {
  return beam_search(Ensemble(model), src, src_lengths, bos, eos, o);
}

std::vector<std::vector<Hypothesis>> beam_search(const Ensemble& model, const Tensor& src,
                                                 const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                 const BeamOptions& o) {
  LUONG_CHECK(o.beam_size >= 1, "beam search: beam_size must be >= 1, got ", o.beam_size);
  LUONG_CHECK(o.n_best >= 1 && o.n_best <= o.beam_size, "beam search: n_best must be in [1, beam_size = ", o.beam_size,
              "], got ", o.n_best);
  NoGradGuard no_grad;
  PackedWeightScope packed_weights;  // every step multiplies by the same weights: pack them once
  const int64_t B = src.size(0), K = o.beam_size;
  const Device device = src.device();
  std::vector<SentenceSearch> sent(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    auto& s = sent[static_cast<size_t>(b)];
    s.beams.resize(static_cast<size_t>(K));
    for (int64_t k = 1; k < K; ++k) s.beams[static_cast<size_t>(k)].log_prob = kNegInf;  // only beam 0 starts
    s.max_len = output_length_limit(o, src_lengths[static_cast<size_t>(b)]);
  }
  // Row b * K + k of the decoder batch is beam k of sentence b.
  std::vector<int64_t> rows(static_cast<size_t>(B * K));
  for (int64_t i = 0; i < B * K; ++i) rows[static_cast<size_t>(i)] = i / K;
  EnsembleState state = model.select_rows(model.encode(src, src_lengths), rows);
  std::vector<int64_t> prev(static_cast<size_t>(B * K), bos);
  std::vector<Candidate> cand;                       // reused across sentences and steps
  std::vector<std::pair<float, int64_t>> row_best;  // likewise
  const std::vector<int64_t> excluded = never_output_tokens(model.config().pad_id, bos);

  for (int64_t t = 0;; ++t) {
    bool all_done = true;
    for (const auto& s : sent) all_done = all_done && s.done;
    if (all_done) break;
    if (o.stop && o.stop()) throw DecodingStopped();
    EnsembleStep step = model.decode_step(state, Tensor::from_ids(prev, {B * K}, device));
    // (B * K, V), read as float: scores accumulate in double, each term converted exactly.
    const Tensor logp = step.log_probs.data().to(Device::cpu()).to(DType::f32);
    const int64_t V = logp.size(1);
    const float* lp = logp.data<float>();
    Tensor att;
    if (o.keep_attention) att = step.attention.data().to(Device::cpu()).to(DType::f32);  // (B * K, S)
    const int64_t S = o.keep_attention ? att.size(1) : 0;

    std::vector<int64_t> parent(static_cast<size_t>(B * K));
    for (int64_t b = 0; b < B; ++b) {
      auto& s = sent[static_cast<size_t>(b)];
      for (int64_t k = 0; k < K; ++k) parent[static_cast<size_t>(b * K + k)] = b * K;  // harmless default
      if (s.done) continue;
      // The 2K best extensions: enough to fill K live beams even if K of them end in </s>.
      cand.clear();
      for (int64_t k = 0; k < K; ++k) {
        const double base = s.beams[static_cast<size_t>(k)].log_prob;
        if (base == kNegInf) continue;
        // A sentence's best 2K extensions are among the best 2K of each of its beams' rows (the order within
        // a row is the global order restricted to it): K x 2K candidates to rank instead of K x V.
        top_tokens(lp + (b * K + k) * V, V, static_cast<size_t>(2 * K), row_best, "beam search", t, b, excluded);
        for (const auto& [x, v] : row_best) cand.push_back({base + static_cast<double>(x), k, v});
      }
      const size_t keep = std::min(cand.size(), static_cast<size_t>(2 * K));
      // Ties go to the lower (beam, token), matching greedy's first-maximum choice.
      std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), cand.end(),
                        [](const Candidate& x, const Candidate& y) {
                          if (x.log_prob != y.log_prob) return x.log_prob > y.log_prob;
                          return x.beam != y.beam ? x.beam < y.beam : x.token < y.token;
                        });
      std::vector<Beam> next;
      const bool at_limit = t + 1 >= s.max_len;
      for (size_t c = 0; c < keep && static_cast<int64_t>(next.size()) < K; ++c) {
        const Candidate& cd = cand[c];
        Beam nb;
        const Beam& pb = s.beams[static_cast<size_t>(cd.beam)];
        nb.log_prob = cd.log_prob;
        nb.tokens = pb.tokens;
        if (o.keep_attention) {
          nb.attention = pb.attention;
          const float* a = att.data<float>() + (b * K + cd.beam) * S;
          nb.attention.emplace_back(a, a + src_lengths[static_cast<size_t>(b)]);
        }
        if (cd.token == eos) {
          finish(s, std::move(nb), o.length_penalty, true);
          if (static_cast<int64_t>(s.finished.size()) >= K) break;
          continue;
        }
        nb.tokens.push_back(cd.token);
        parent[static_cast<size_t>(b * K + static_cast<int64_t>(next.size()))] = b * K + cd.beam;
        next.push_back(std::move(nb));
      }
      if (static_cast<int64_t>(s.finished.size()) >= K || at_limit || next.empty()) {
        if (static_cast<int64_t>(s.finished.size()) < K)
          for (auto& nb : next) finish(s, std::move(nb), o.length_penalty, false);
        s.done = true;
        continue;
      }
      while (static_cast<int64_t>(next.size()) < K) {  // fewer candidates than beams (tiny vocabularies)
        Beam filler;
        filler.log_prob = kNegInf;
        next.push_back(filler);
      }
      s.beams = std::move(next);
      for (int64_t k = 0; k < K; ++k) {
        const auto& tok = s.beams[static_cast<size_t>(k)].tokens;
        prev[static_cast<size_t>(b * K + k)] = tok.empty() ? bos : tok.back();
      }
    }
    state = model.select_rows(step.state, parent);
  }

  std::vector<std::vector<Hypothesis>> out(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    auto& f = sent[static_cast<size_t>(b)].finished;
    std::stable_sort(f.begin(), f.end(), [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    f.resize(std::min(f.size(), static_cast<size_t>(o.n_best)));
    out[static_cast<size_t>(b)] = std::move(f);
  }
  return out;
}

}  // namespace luong::nmt
