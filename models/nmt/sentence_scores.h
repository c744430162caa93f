// How probable a model (or an ensemble) finds each given translation: log p(target | source), summed over the
// target's pieces and </s>, under teacher forcing. What `luong score` prints: for reranking n-best lists, for
// filtering a noisy corpus by its per-token scores, for comparing two models sentence by sentence.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/nmt/data/corpus.h"
#include "models/nmt/ensemble.h"

namespace luong::nmt {

struct PairScore {
  double log_prob = 0.0;  // natural log; an ensemble's is the log of the members' mean probability, per token
  int64_t tokens = 0;     // target positions scored: its pieces and </s>
};

// One score per pair of `corpus`, in its order. The pairs are batched `batch_size` at a time in the length order
// evaluate_loss uses (the scores do not depend on it beyond float rounding); `done` hears how many pairs are
// scored after each batch. Every pair needs a non-empty source.
std::vector<PairScore> score_pairs(const Ensemble& models, const Corpus& corpus, int64_t batch_size, Device device,
                                   const std::function<void(size_t done)>& done = {});

}  // namespace luong::nmt
