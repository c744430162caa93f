// The attention a model (an ensemble: its first member) pays while it is forced to produce given targets
// (teacher forcing: each step is fed the reference's previous token, as in training), the way Luong et al.
// (2015, §5.4) read alignments off their models to measure their quality against hand alignments.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/nmt/data/corpus.h"
#include "models/nmt/ensemble.h"

namespace luong::nmt {

// For each pair of `corpus`, in its order: one row per target position (its pieces, then </s>), each with one
// weight per source token in the order the encoder read them (reversed for a model.reverse_source model:
// attention_in_source_order maps them back). Pairs are batched `batch_size` at a time in evaluation_order;
// `done` hears how many are finished after each batch. Every pair needs a non-empty source.
std::vector<std::vector<std::vector<float>>> forced_attention(const Ensemble& models, const Corpus& corpus,
                                                              int64_t batch_size, Device device,
                                                              const std::function<void(size_t done)>& done = {});

}  // namespace luong::nmt
