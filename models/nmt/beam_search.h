// Batched beam search over NmtModel's step-wise API (or an Ensemble's).
//
// Every sentence keeps `beam_size` live hypotheses (rows of one decoder batch of B * K rows). At each step the
// 2K best extensions of a sentence's beams are considered in score order: an extension ending in </s>
// becomes a finished hypothesis, the others fill the K live beams. A sentence is done when it has K finished
// hypotheses or reaches its length limit (max_len_ratio * source length, at least 1), and its live beams are
// then finished as they are. Finished hypotheses are ranked by length-normalised log-probability
// score / lp(len) with lp(len) = ((5 + len) / 6)^alpha (Wu et al. 2016, GNMT); alpha = 0 ranks by the plain
// sum. <pad> and <s> are never extensions (log-probability -inf, see never_output_tokens). With beam_size 1
// this is exactly greedy decoding.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "framework/core/error.h"
#include "models/nmt/ensemble.h"
#include "models/nmt/model.h"

namespace luong::nmt {

struct BeamOptions {
  int64_t beam_size = 5;
  double length_penalty = 0.0;  // alpha
  double max_len_ratio = 2.0;   // output tokens <= ratio * source tokens (+ 1)
  int64_t max_len = 0;          // if > 0, a fixed output limit instead of the ratio
  int64_t n_best = 1;           // hypotheses returned per sentence (<= beam_size)
  bool keep_attention = false;  // return each hypothesis' attention weights (for unk replacement / plots)
  // Polled before each decoding step when set: true gives up the search with DecodingStopped (a training run's
  // validation asked to stop: a long decode must not hold up the stop's checkpoint).
  std::function<bool()> stop;
};

// Thrown by beam_search (and translate_sentences) when BeamOptions::stop said to give up.
class DecodingStopped : public Error {
 public:
  DecodingStopped() : Error("decoding stopped: a stop was requested") {}
};

struct Hypothesis {
  std::vector<int64_t> tokens;               // without <s> and </s>
  double log_prob = 0.0;                     // sum of token log-probabilities (incl. </s> when finished)
  double score = 0.0;                        // log_prob / lp(len)
  // Per output token (and </s>), weights over the encoder's positions: the source's, reversed when the
  // model has reverse_source (Translator turns them back into source order).
  std::vector<std::vector<float>> attention;
};

// A sentence's output limit in tokens: options.max_len when set, else max_len_ratio x its source length (at
// least 1) + 1.
int64_t output_length_limit(const BeamOptions& options, int64_t src_length);

// lp(len) = ((5 + len) / 6)^alpha, 1 when alpha is 0: a hypothesis' score is its log-probability over this.
double gnmt_length_norm(int64_t len, double alpha);

// src (B, S) int64 with src_lengths (B) -> per sentence its n_best hypotheses, best first. Runs without
// gradients; the model should be in eval mode.
std::vector<std::vector<Hypothesis>> beam_search(const NmtModel& model, const Tensor& src,
                                                 const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                 const BeamOptions& options);
// The same over an ensemble's mixture distribution (one member: the model alone, bit for bit).
std::vector<std::vector<Hypothesis>> beam_search(const Ensemble& models, const Tensor& src,
                                                 const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                 const BeamOptions& options);

}  // namespace luong::nmt
