// A small NMT model trained by the benchmark's step (forward, summed cross-entropy, backward, gradient /
// tokens, global-norm clip, SGD), run two ways on the same batches: eagerly, with the host-side clip the
// trainer uses, and through CapturedStep (train/captured_step.h) with the clip kept on the device. Shared
// by the CPU test (tests/train/captured_step_test.cpp) and the CUDA graph test (tests/cuda/).
#pragma once
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "framework/autograd/flat_parameters.h"
#include "framework/optim/average_and_clip.h"
#include "framework/optim/optimizer.h"
#include "framework/train/captured_step.h"
#include "models/nmt/model.h"

namespace luong::testing {

struct CapturedStepRun {
  std::vector<double> losses, norms;  // per step
  std::vector<bool> finite;
  std::vector<double> params;  // after the last step
};

struct CapturedStepFixture {
  static constexpr int64_t kBatch = 4, kSrc = 5, kTgt = 6, kVocab = 23;
  // Padded sources of fixed lengths (the masks and the reversal are host-derived, frozen in a capture), and
  // target padding at the end of two rows (ignored by the loss).
  std::vector<int64_t> lengths{5, 3, 4, 2};
  std::vector<int64_t> tgt_lengths{6, 6, 4, 5};
  std::string attention = "general";
  double clip = 0.1;  // small: the clip engages (the first norm is about 0.2)

  nmt::ModelConfig config() const {
    nmt::ModelConfig mc;
    mc.src_vocab = kVocab, mc.tgt_vocab = kVocab, mc.layers = 2, mc.hidden_size = 8, mc.embedding_size = 6;
    mc.dropout = 0.0, mc.attention = attention, mc.input_feeding = true, mc.reverse_source = true;
    return mc;
  }

  struct Batch {
    Tensor src, tgt_in, tgt_out;
    int64_t tokens = 0;
  };
  std::vector<Batch> batches(Device device, int n, uint64_t seed) const {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> id(4, kVocab - 1);
    const int64_t pad = config().pad_id;
    std::vector<Batch> out;
    for (int i = 0; i < n; ++i) {
      std::vector<int64_t> src(kBatch * kSrc, pad), tin(kBatch * kTgt, pad), tout(kBatch * kTgt, pad);
      Batch b;
      for (int64_t r = 0; r < kBatch; ++r) {
        for (int64_t t = 0; t < lengths[r]; ++t) src[r * kSrc + t] = id(rng);
        for (int64_t t = 0; t < tgt_lengths[r]; ++t) tin[r * kTgt + t] = id(rng), tout[r * kTgt + t] = id(rng);
        b.tokens += tgt_lengths[r];
      }
      b.src = Tensor::from_ids(src, {kBatch, kSrc}, device);
      b.tgt_in = Tensor::from_ids(tin, {kBatch, kTgt}, device);
      b.tgt_out = Tensor::from_ids(tout, {kBatch, kTgt}, device);
      out.push_back(b);
    }
    return out;
  }

  // steps > batches: the batches rotate, as in the benchmark.
  CapturedStepRun run(Device device, bool captured, int steps, DType dtype = DType::f32) const {
    Generator init(7);
    nmt::NmtModel model(config(), init, dtype);
    model.train();
    std::vector<Variable> params;
    for (auto& [name, v] : model.named_parameters()) params.push_back(v);
    FlatParameters flat(params, device);
    auto sgd = make_optimizer("sgd");
    const std::vector<Batch> data = batches(device, 3, 11);
    CapturedStepRun r;
    if (!captured) {
      for (int i = 0; i < steps; ++i) {
        const Batch& b = data[static_cast<size_t>(i) % data.size()];
        flat.zero_grad();
        CrossEntropy ce = model.forward_loss(b.src, lengths, b.tgt_in, b.tgt_out);
        ce.loss.backward();
        const AveragedGradient g = average_and_clip_(flat.grad(), ce.tokens, clip);
        if (g.finite) sgd->step(flat, 1.0);
        r.losses.push_back(ce.loss.data().item()), r.norms.push_back(g.norm), r.finite.push_back(g.finite);
      }
    } else {
      // The step's inputs and outputs: tensors at fixed addresses, refilled / read between runs.
      Batch in{Tensor::empty({kBatch, kSrc}, DType::i64, device), Tensor::empty({kBatch, kTgt}, DType::i64, device),
               Tensor::empty({kBatch, kTgt}, DType::i64, device), data[0].tokens};
      Tensor stats = Tensor::zeros({3}, DType::f64, device);
      Tensor loss;
      CapturedStep step(device, [&] {
        flat.zero_grad();
        CrossEntropy ce = model.forward_loss(in.src, lengths, in.tgt_in, in.tgt_out);
        ce.loss.backward();
        average_and_clip_on_device_(flat.grad(), in.tokens, clip, stats);
        sgd->step(flat, 1.0);
        loss = ce.loss.data();
      });
      for (int i = 0; i < steps; ++i) {
        const Batch& b = data[static_cast<size_t>(i) % data.size()];
        in.src.copy_(b.src), in.tgt_in.copy_(b.tgt_in), in.tgt_out.copy_(b.tgt_out);
        step.run();
        const AveragedGradient g = read_averaged_gradient(stats);
        r.losses.push_back(loss.item()), r.norms.push_back(g.norm), r.finite.push_back(g.finite);
      }
    }
    r.params = flat.data().to_vector();
    return r;
  }
};

}  // namespace luong::testing
