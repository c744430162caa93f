// Batch: padded id tensors for one training or evaluation step, on the CPU (the trainer moves them).
#pragma once
#include <cstdint>
#include <vector>

#include "framework/tensor/tensor.h"
#include "models/nmt/data/corpus.h"

namespace luong::nmt {

struct Batch {
  Tensor src;          // (batch, src_len) int64: source ids, padded with <pad>
  Tensor src_lengths;  // (batch) int64: tokens per source sentence
  Tensor tgt_in;       // (batch, tgt_len) int64: <s> y_1 .. y_n, padded with <pad>
  Tensor tgt_out;      // (batch, tgt_len) int64: y_1 .. y_n </s>, padded with <pad>
  Tensor tgt_lengths;  // (batch) int64: n + 1 (the </s> counts)
  int64_t sentences = 0;
  int64_t src_tokens = 0;  // sum of src_lengths
  int64_t tgt_tokens = 0;  // sum of tgt_lengths: non-pad positions of tgt_out, the loss's token count
  // Totals over the global batch this rank's shard came from (equal to the above with one rank), so every
  // rank can normalise its loss as one rank with the whole batch would.
  int64_t global_sentences = 0;
  int64_t global_tgt_tokens = 0;
  std::vector<int64_t> indices;  // corpus example index of each row (to restore file order)
};

// Pads the examples `indices` of `corpus` into a batch (rows in the order given).
Batch make_batch(const Corpus& corpus, const std::vector<int64_t>& indices);

}  // namespace luong::nmt
