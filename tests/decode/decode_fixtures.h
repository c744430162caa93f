// Small random models and a padded batch of sources for the decoder tests (beam search, ensembles).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "models/nmt/model.h"

namespace luong::nmt {

// Source vocabulary 13, target vocabulary 11; large initial weights give peaked, varied distributions.
// Models of other seeds, depths and sizes share the target side, as ensemble members must.
inline std::unique_ptr<NmtModel> random_model(const std::string& attention, uint64_t seed = 21, int64_t layers = 2,
                                              int64_t hidden = 16) {
  ModelConfig c;
  c.src_vocab = 13, c.tgt_vocab = 11, c.layers = layers, c.hidden_size = hidden, c.embedding_size = 8;
  c.dropout = 0.0, c.attention = attention, c.init_range = 0.5;
  Generator g(seed);
  auto m = std::make_unique<NmtModel>(c, g);
  m->eval();
  return m;
}

// Four sentences of 5, 3, 6 and 1 tokens, padded to 6.
inline Tensor sources(std::vector<int64_t>& lengths) {
  lengths = {5, 3, 6, 1};
  std::vector<int64_t> ids{4, 5, 6, 7, 8, 0, 9, 10, 11, 0, 0, 0, 12, 4, 5, 6, 7, 8, 6, 0, 0, 0, 0, 0};
  return Tensor::from_ids(ids, {4, 6});
}

}  // namespace luong::nmt
