// The NMT model's training step run repeatedly on one batch shape, counting the calls that reached the
// system allocator (cudaMalloc / aligned_alloc) after a warm-up: issue 9's "no allocation in the
// steady-state step". Shared by the CPU test (tests/train/steady_state_alloc_test.cpp) and the CUDA one
// (tests/cuda/steady_state_alloc_test.cpp).
#pragma once
#include <ostream>
#include <random>
#include <vector>

#include "framework/autograd/flat_parameters.h"
#include "framework/memory/allocator.h"
#include "framework/optim/average_and_clip.h"
#include "framework/optim/optimizer.h"
#include "models/nmt/model.h"

namespace luong::testing {

// The benchmark's step (SGD, clip, no dropout) or the trainer's (Adam, dropout, label smoothing).
struct SteadyStateCase {
  const char* optimizer;
  double dropout, label_smoothing;
};
inline void PrintTo(const SteadyStateCase& c, std::ostream* os) {
  *os << c.optimizer << ", dropout " << c.dropout << ", label smoothing " << c.label_smoothing;
}

struct SteadyStateCounts {
  int64_t after_warmup = 0, after_steps = 0;
};

// Three padded batches of one shape with different lengths (as a bucketed loader gives them), each run once
// to warm the cache, then `steps` more steps over them. after_step runs after each step (a
// test that the check can fail empties the cache there).
template <class AfterStep = void (*)()>
SteadyStateCounts run_steady_state_steps(
    Device device, const SteadyStateCase& c, int steps, AfterStep after_step = [] {}) {
  constexpr int64_t kBatch = 8, kSrc = 7, kTgt = 9, kVocab = 41;
  nmt::ModelConfig mc;
  mc.src_vocab = kVocab, mc.tgt_vocab = kVocab, mc.layers = 2, mc.hidden_size = 16, mc.embedding_size = 12;
  mc.dropout = c.dropout, mc.attention = "general", mc.input_feeding = true;
  Generator init(5);
  nmt::NmtModel model(mc, init);
  model.train();
  std::vector<Variable> params;
  for (auto& [name, v] : model.named_parameters()) params.push_back(v);
  FlatParameters flat(params, device);  // moves the parameters onto the device, into one buffer
  auto opt = make_optimizer(c.optimizer);

  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> id(4, kVocab - 1);
  struct Batch {
    Tensor src, tgt_in, tgt_out;
    std::vector<int64_t> lengths;
  };
  std::vector<Batch> batches;
  for (int i = 0; i < 3; ++i) {
    std::vector<int64_t> src(kBatch * kSrc, mc.pad_id), tin(kBatch * kTgt, mc.pad_id), tout(kBatch * kTgt, mc.pad_id);
    Batch b;
    for (int64_t r = 0; r < kBatch; ++r) {  // row 0 full length, so every batch has the same shape
      const int64_t ls = r == 0 ? kSrc : 2 + (r + i) % (kSrc - 1), lt = r == 0 ? kTgt : 3 + (r * 2 + i) % (kTgt - 2);
      b.lengths.push_back(ls);
      for (int64_t t = 0; t < ls; ++t) src[r * kSrc + t] = id(rng);
      for (int64_t t = 0; t < lt; ++t) tin[r * kTgt + t] = id(rng), tout[r * kTgt + t] = id(rng);
    }
    b.src = Tensor::from_ids(src, {kBatch, kSrc}, device);
    b.tgt_in = Tensor::from_ids(tin, {kBatch, kTgt}, device);
    b.tgt_out = Tensor::from_ids(tout, {kBatch, kTgt}, device);
    batches.push_back(std::move(b));
  }

  Generator dropout_rng(9);
  auto step = [&](int i) {
    const Batch& b = batches[static_cast<size_t>(i) % batches.size()];
    flat.zero_grad();
    CrossEntropy ce = model.forward_loss(b.src, b.lengths, b.tgt_in, b.tgt_out, c.label_smoothing, &dropout_rng);
    ce.loss.backward();
    const AveragedGradient g = average_and_clip_(flat.grad(), ce.tokens, 1.0);
    if (g.finite) opt->step(flat, 0.01);
    after_step();
  };
  Allocator& alloc = allocator_for(device);
  SteadyStateCounts counts;
  for (int i = 0; i < 3; ++i) step(i);
  counts.after_warmup = alloc.stats().num_allocs;
  for (int i = 3; i < 3 + steps; ++i) step(i);
  counts.after_steps = alloc.stats().num_allocs;
  return counts;
}

}  // namespace luong::testing
