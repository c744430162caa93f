// One forward + backward pass of a tiny NMT model (2 x 40 LSTM, embeddings 24, general attention with input
// feeding, no dropout; three sentences of different lengths, so padding is exercised): the loss followed by
// every parameter's gradient. For tests that run the same step two ways (a kernel on and off) and compare.
#pragma once
#include <vector>

#include "models/nmt/model.h"

namespace luong::testing {

inline std::vector<Tensor> tiny_nmt_loss_and_gradients() {
  nmt::ModelConfig c;
  c.src_vocab = 23, c.tgt_vocab = 19, c.pad_id = 0, c.layers = 2, c.hidden_size = 40, c.embedding_size = 24;
  c.dropout = 0.0, c.attention = "general";
  const Tensor src = Tensor::from_ids({3, 5, 2, 6, 4, 7, 8, 0, 9, 10, 11, 12}, {3, 4});
  const Tensor tgt_in = Tensor::from_ids({1, 4, 3, 1, 5, 0, 1, 6, 7}, {3, 3});
  const Tensor tgt_out = Tensor::from_ids({4, 3, 2, 5, 2, 0, 6, 7, 2}, {3, 3});
  Generator init(5);
  nmt::NmtModel m(c, init, DType::f32);
  CrossEntropy ce = m.forward_loss(src, {4, 3, 4}, tgt_in, tgt_out);
  ce.loss.backward();
  std::vector<Tensor> out{ce.loss.data().clone()};
  for (auto& p : m.parameters()) out.push_back(p.grad().clone());
  return out;
}

}  // namespace luong::testing
