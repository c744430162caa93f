// train.freeze's backward (optim/frozen_parameters.h): a frozen part's gradient is off, so backward computes
// nothing for it, and where no trained parameter lies below it (a frozen encoder, a frozen embedding) none of
// the work that led to it; every trained parameter's gradient is still, bit for bit, the full backward's.
#include <gtest/gtest.h>

#include "framework/autograd/flat_parameters.h"
#include "framework/optim/frozen_parameters.h"
#include "models/nmt/model.h"
#include "models/nmt/model_parts.h"

namespace luong::nmt {
namespace {

// Three sentences of different lengths, so padding is exercised.
struct Batch {
  Tensor src = Tensor::from_ids({3, 5, 2, 6, 4, 7, 8, 0, 9, 10, 11, 12}, {3, 4});
  std::vector<int64_t> src_lengths{4, 3, 4};
  Tensor tgt_in = Tensor::from_ids({1, 4, 3, 1, 5, 0, 1, 6, 7}, {3, 3});
  Tensor tgt_out = Tensor::from_ids({4, 3, 2, 5, 2, 0, 6, 7, 2}, {3, 3});
};

ModelConfig small_config() {
  ModelConfig c;
  c.src_vocab = 23, c.tgt_vocab = 19, c.pad_id = 0, c.layers = 2, c.hidden_size = 40, c.embedding_size = 24;
  c.dropout = 0.0, c.attention = "general";
  return c;
}

// The loss after one forward + backward; the gradients are left in flat.
double loss_and_backward(NmtModel& m) {
  const Batch b;
  CrossEntropy ce = m.forward_loss(b.src, b.src_lengths, b.tgt_in, b.tgt_out);
  ce.loss.backward();
  return ce.loss.data().item();
}

TEST(FrozenBackward, TrainedGradientsAreTheFullPassesAndFrozenOnesAreNeverComputed) {
  struct Variant {
    const char* what;
    ModelConfig cfg;
  };
  std::vector<Variant> variants{{"general", small_config()}};
  {
    ModelConfig c = small_config();
    c.bidirectional_encoder = true, c.tie_embeddings = true, c.embedding_size = 40;
    c.attention = "local-p", c.attention_score = "concat";
    variants.push_back({"bidirectional, tied, local-p/concat", c});
  }
  // A value no gradient here comes near: backward adding anything to it, or writing over it, changes it.
  constexpr double kUntouched = 1e6;
  for (const Variant& v : variants) {
    Generator init(5);
    NmtModel m(v.cfg, init, DType::f32);
    const std::vector<Variable> params = m.parameters();  // named_parameters() order, as training flattens them
    FlatParameters flat(params, Device::cpu());
    flat.zero_grad();
    const double full_loss = loss_and_backward(m);
    const std::vector<double> full = flat.grad().to_vector();

    for (const char* spec : {"encoder", "encoder.embedding", "decoder.embedding", "encoder.lstm.1,decoder.lstm.0",
                             "decoder.attention,decoder.combine"}) {
      SCOPED_TRACE(std::string(v.what) + ", frozen " + spec);
      const std::vector<size_t> frozen_indices = parameter_indices_in_parts("test", spec, m);
      ASSERT_FALSE(frozen_indices.empty());
      std::vector<bool> is_frozen(params.size(), false);
      for (size_t i : frozen_indices) is_frozen[i] = true;
      {
        FrozenParameters frozen(flat, frozen_indices);
        // Trained slots start at zero (backward accumulates into them), frozen ones at kUntouched.
        flat.grad().zero_();
        for (size_t i : frozen_indices) flat.grad().narrow(flat.offset(i), params[i].data().numel()).fill_(kUntouched);
        EXPECT_EQ(loss_and_backward(m), full_loss);
        const std::vector<double> got = flat.grad().to_vector();
        for (size_t i = 0; i < params.size(); ++i) {
          EXPECT_EQ(params[i].requires_grad(), !is_frozen[i]) << params[i].name();
          for (int64_t k = 0; k < params[i].data().numel(); ++k) {
            const auto at = static_cast<size_t>(flat.offset(i) + k);
            if (is_frozen[i]) {
              ASSERT_EQ(got[at], kUntouched) << params[i].name() << " [" << k << "] was written";
            } else {
              ASSERT_EQ(got[at], full[at]) << params[i].name() << " [" << k << "]";
            }
          }
        }
      }
      for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(params[i].requires_grad()) << params[i].name() << " after";
    }
  }
}

// Nothing below a frozen encoder needs a gradient, so its outputs record no graph: the encoder's whole
// backward (its LSTMs' recurrences, the embedding's scatter) is skipped, not merely its weight products.
TEST(FrozenBackward, AFrozenEncodersOutputsRecordNoGraph) {
  Generator init(5);
  NmtModel m(small_config(), init, DType::f32);
  FlatParameters flat(m.parameters(), Device::cpu());
  const Batch b;
  EXPECT_TRUE(m.encoder().forward(b.src, b.src_lengths, nullptr).memory.requires_grad());
  FrozenParameters frozen(flat, parameter_indices_in_parts("test", "encoder", m));
  const EncoderOutput out = m.encoder().forward(b.src, b.src_lengths, nullptr);
  EXPECT_FALSE(out.memory.requires_grad());
  for (const LstmState& s : out.final) EXPECT_FALSE(s.h.requires_grad() || s.c.requires_grad());
}

}  // namespace
}  // namespace luong::nmt
