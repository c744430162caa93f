// Sampling translations instead of searching for the most probable one: at each step the next token is drawn
// from the model's distribution (the ensemble's mixture), sharpened or flattened by a temperature and
// optionally cut to its top k tokens (OpenNMT-py's random_sampling_topk / random_sampling_temp, fairseq's
// --sampling). Sampled back-translations train better forward models than beam-searched ones (Edunov et al.
// 2018, "Understanding Back-Translation at Scale"), and several samples per sentence give the candidate lists
// of minimum-Bayes-risk decoding.
//
// Draws are counter-based (Philox4x32-10 keyed by the seed, counted by sentence, sample and step), so a
// sentence's samples depend on the seed, its index in the input and the model alone: not on the batch it was
// decoded in, the batch size, the thread count or the other sentences.
#pragma once
#include <cstdint>
#include <vector>

#include "models/nmt/beam_search.h"
#include "models/nmt/ensemble.h"

namespace luong::nmt {

struct SamplingOptions {
  bool enabled = false;      // off: beam search
  double temperature = 1.0;  // > 0: p_i proportional to exp(log p_i / temperature); 1 = the model's distribution
  int64_t top_k = 0;         // > 0: draw among the k most probable tokens only; 0 = the whole vocabulary
  uint64_t seed = 1;
};

// src (B, S) with src_lengths (B) -> per sentence limits.n_best samples, highest score first (the score as beam
// search gives it: log-probability under the untempered model over the GNMT length norm). `sentence_ids` (B)
// are the sentences' indices in the whole input, which key their draws. From `limits`: the output length
// limit (max_len_ratio or max_len), n_best, keep_attention, length_penalty, stop; beam_size is not used.
// <pad> and <s> are never drawn. A NaN log-probability is an error naming the step and sentence.
std::vector<std::vector<Hypothesis>> sample_translations(const Ensemble& models, const Tensor& src,
                                                         const std::vector<int64_t>& src_lengths, int64_t bos,
                                                         int64_t eos, const BeamOptions& limits,
                                                         const SamplingOptions& sampling,
                                                         const std::vector<uint64_t>& sentence_ids);

// One draw from a row of log-probabilities (V entries) with `uniform` in [0, 1): the token whose cumulative
// tempered weight first exceeds uniform x their total, over the top_k best (all when 0), never an excluded
// token. Exposed for tests.
int64_t sample_token(const float* row, int64_t V, const SamplingOptions& sampling, double uniform,
                     const std::vector<int64_t>& excluded, int64_t step, int64_t sentence);

// The uniform in [0, 1) (53 bits) of draw (sentence, sample, step) under `seed`.
double sampling_uniform(uint64_t seed, uint64_t sentence, uint64_t sample, uint64_t step);

}  // namespace luong::nmt
