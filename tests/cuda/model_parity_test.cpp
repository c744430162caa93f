// The whole NMT model on CUDA against the float64 CPU reference: the summed loss and every parameter's
// gradient of a padded batch, for each attention family (global dot / general / concat, local-m, local-p,
// bidirectional and reversed sources, tied embeddings, dropout, no input feeding, frozen parts), and greedy
// and beam decoding token for token. The op parity cases check each op alone; this checks how the model
// composes them on the device (the fused LSTM cell, the fused generator + loss, masks, reversal, row selection).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "models/nmt/beam_search.h"
#include "models/nmt/ensemble.h"
#include "models/nmt/forced_attention.h"
#include "models/nmt/greedy.h"
#include "models/nmt/model.h"
#include "models/nmt/sentence_scores.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/support/random_pairs.h"

namespace luong::testing {
namespace {

using nmt::ModelConfig;
using nmt::NmtModel;

// Ids 0..3 are <pad>, <s>, </s>, <unk> as in the vocabularies training builds.
constexpr int64_t kPad = 0, kBos = 1, kEos = 2;

ModelConfig small_config() {
  ModelConfig c;
  c.src_vocab = 23, c.tgt_vocab = 19, c.pad_id = kPad, c.layers = 2, c.hidden_size = 16, c.embedding_size = 12;
  c.dropout = 0.0, c.attention = "general", c.attention_window = 2;
  return c;
}

// Five sentences of different lengths (one of a single token), padded: the masks and the local windows'
// clipping at both ends are exercised.
struct Batch {
  std::vector<int64_t> src_lengths{9, 4, 7, 1, 6};
  std::vector<int64_t> tgt_lengths{7, 3, 5, 2, 6};
  Tensor src, tgt_in, tgt_out;  // on the CPU

  explicit Batch(const ModelConfig& c) {
    Generator gen(77);
    const int64_t B = 5, S = 9, T = 7;
    std::vector<int64_t> s(B * S, kPad), ti(B * T, kPad), to(B * T, kPad);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < src_lengths[b]; ++i)
        s[b * S + i] = 4 + static_cast<int64_t>(gen.uniform() * (c.src_vocab - 4));
      ti[b * T] = kBos;
      for (int64_t i = 0; i + 1 < tgt_lengths[b]; ++i) {
        const int64_t tok = 4 + static_cast<int64_t>(gen.uniform() * (c.tgt_vocab - 4));
        to[b * T + i] = tok;
        ti[b * T + i + 1] = tok;
      }
      to[b * T + tgt_lengths[b] - 1] = kEos;
    }
    src = Tensor::from_ids(s, {B, S});
    tgt_in = Tensor::from_ids(ti, {B, T});
    tgt_out = Tensor::from_ids(to, {B, T});
  }
};

// A model of `dtype` on `device` holding exactly the reference's parameters (rounded to dtype).
std::unique_ptr<NmtModel> copy_of(const NmtModel& ref, DType dtype, Device device) {
  auto m = std::make_unique<NmtModel>(ref.config(), dtype);
  const auto src = ref.named_parameters();
  auto dst = m->named_parameters();
  EXPECT_EQ(src.size(), dst.size());
  for (size_t i = 0; i < dst.size() && i < src.size(); ++i)
    dst[i].second.data() = src[i].second.data().to(dtype).to(device);
  return m;
}

struct LossAndGrads {
  double loss = 0.0;
  int64_t tokens = 0;
  std::vector<Tensor> grads;  // per parameter, on the CPU as float64
};

LossAndGrads loss_and_grads(const NmtModel& m, const Batch& b, Device device) {
  Generator dropout_gen(5);  // Philox masks depend only on (seed, offset, index): the same on every device
  CrossEntropy ce =
      m.forward_loss(b.src.to(device), b.src_lengths, b.tgt_in.to(device), b.tgt_out.to(device), 0.0, &dropout_gen);
  ce.loss.backward();
  LossAndGrads r;
  r.loss = ce.loss.data().item();
  r.tokens = ce.tokens;
  for (auto& [name, p] : m.named_parameters())
    r.grads.push_back(p.grad().defined() ? p.grad().to(Device::cpu()).to(DType::f64) : Tensor());
  return r;
}

std::vector<double> as_doubles(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

struct Variant {
  std::string what;
  ModelConfig cfg;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (const char* att : {"dot", "general", "concat"}) {
    ModelConfig c = small_config();
    c.attention = att;
    v.push_back({std::string("global ") + att, c});
  }
  {
    ModelConfig c = small_config();
    c.attention = "local-m", c.attention_score = "dot";
    v.push_back({"local-m/dot", c});
  }
  {
    ModelConfig c = small_config();
    c.attention = "local-p", c.attention_score = "concat", c.dropout = 0.3;
    v.push_back({"local-p/concat with dropout", c});
  }
  {
    ModelConfig c = small_config();
    c.bidirectional_encoder = true, c.reverse_source = true, c.tie_embeddings = true, c.embedding_size = 16;
    v.push_back({"general, bidirectional, reversed source, tied embeddings", c});
  }
  {
    ModelConfig c = small_config();
    c.input_feeding = false, c.layers = 3;
    v.push_back({"general, 3 layers, no input feeding", c});
  }
  return v;
}

// Turns off the gradients of the parameters whose names start with `prefix` (train.freeze's mechanism).
void freeze(const NmtModel& m, const std::string& prefix) {
  if (prefix.empty()) return;
  for (auto& [name, p] : m.named_parameters())
    if (name.rfind(prefix, 0) == 0) p.set_requires_grad(false);
}

// Checks one device run against the float64 CPU run of the same parameters; with `frozen`, the parameters
// under that prefix get no gradient on either side, and the others must still match.
void expect_matches_reference(const Variant& v, Device device, DType dtype, double tolerance,
                              const std::string& frozen = "") {
  SCOPED_TRACE(v.what + " on " + device.name() + " as " + dtype_name(dtype) + (frozen.empty() ? "" : ", frozen ") +
               frozen);
  Generator init(3);
  NmtModel ref(v.cfg, init, DType::f64);
  const Batch batch(v.cfg);
  const auto dev = copy_of(ref, dtype, device);
  freeze(ref, frozen), freeze(*dev, frozen);
  const LossAndGrads want = loss_and_grads(ref, batch, Device::cpu());
  const LossAndGrads got = loss_and_grads(*dev, batch, device);

  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_LE(max_mixed_error({got.loss}, {want.loss}), tolerance) << "loss " << got.loss << " vs " << want.loss;
  const auto names = ref.named_parameters();
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t i = 0; i < want.grads.size(); ++i) {
    ASSERT_EQ(got.grads[i].defined(), want.grads[i].defined()) << names[i].first;
    if (!frozen.empty()) {
      EXPECT_EQ(names[i].first.rfind(frozen, 0) != 0, want.grads[i].defined()) << names[i].first;
    }
    if (!want.grads[i].defined()) continue;
    EXPECT_LE(max_mixed_error(got.grads[i], want.grads[i]), tolerance) << "gradient of " << names[i].first;
  }
}

// The harness and its float32 tolerance, on machines without a GPU too.
TEST(CudaModelParity, CpuFloat32LossAndGradientsMatchFloat64) {
  for (const auto& v : variants()) expect_matches_reference(v, Device::cpu(), DType::f32, 2e-5);
}

// train.freeze on the device: the ops skip the frozen parts' gradients there as on the CPU, and the trained
// parameters' gradients still match the reference (a frozen encoder skips its whole backward; a frozen
// decoder LSTM only its weight products).
TEST(CudaModelParity, FrozenPartsGetNoGradientAndTheRestMatch) {
  for (const char* frozen : {"encoder.", "decoder.lstm.", "decoder.embedding."}) {
    for (const auto& v : variants()) expect_matches_reference(v, Device::cpu(), DType::f32, 2e-5, frozen);
    if (cuda_available()) {
      for (const auto& v : variants()) expect_matches_reference(v, Device::cuda(0), DType::f32, 2e-5, frozen);
    }
  }
}

TEST(CudaModelParity, Float64LossAndGradientsMatchTheCpu) {
  LUONG_REQUIRE_CUDA();
  // Same arithmetic, other summation orders and libm: far below 1e-9.
  for (const auto& v : variants()) expect_matches_reference(v, Device::cuda(0), DType::f64, 1e-9);
}

TEST(CudaModelParity, Float32LossAndGradientsMatchTheFloat64Cpu) {
  LUONG_REQUIRE_CUDA();
  // float32 through two to three LSTM layers, attention and a 19-way softmax: a wrong kernel is off by
  // O(1); rounding stays near 2e-7 (the CPU's float32 run, above), and TF32 left on by mistake (1e-3) fails.
  for (const auto& v : variants()) expect_matches_reference(v, Device::cuda(0), DType::f32, 2e-5);
}

// The same hypotheses token for token, float64 scores to 1e-9 and attention rows (when kept) to 1e-6.
void expect_same_hypotheses(const std::vector<std::vector<nmt::Hypothesis>>& got,
                            const std::vector<std::vector<nmt::Hypothesis>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < want.size(); ++s) {
    ASSERT_EQ(got[s].size(), want[s].size()) << "sentence " << s;
    for (size_t h = 0; h < want[s].size(); ++h) {
      EXPECT_EQ(got[s][h].tokens, want[s][h].tokens) << "sentence " << s << " hypothesis " << h;
      EXPECT_NEAR(got[s][h].score, want[s][h].score, 1e-9) << "sentence " << s << " hypothesis " << h;
      ASSERT_EQ(got[s][h].attention.size(), want[s][h].attention.size());
      for (size_t t = 0; t < want[s][h].attention.size(); ++t)
        EXPECT_LE(max_mixed_error(as_doubles(got[s][h].attention[t]), as_doubles(want[s][h].attention[t])), 1e-6)
            << "attention of sentence " << s << " hypothesis " << h << " token " << t;
    }
  }
}

TEST(CudaModelParity, GreedyAndBeamDecodingMatchTheCpuTokenForToken) {
  LUONG_REQUIRE_CUDA();
  for (const auto& v : variants()) {
    SCOPED_TRACE(v.what);
    Generator init(11);
    NmtModel cpu(v.cfg, init, DType::f64);
    const auto gpu = copy_of(cpu, DType::f64, Device::cuda(0));
    cpu.eval();
    gpu->eval();
    const Batch batch(v.cfg);
    NoGradGuard no_grad;
    EXPECT_EQ(nmt::greedy_decode(*gpu, batch.src.to(Device::cuda(0)), batch.src_lengths, kBos, kEos, 12),
              nmt::greedy_decode(cpu, batch.src, batch.src_lengths, kBos, kEos, 12));
    nmt::BeamOptions o;
    o.beam_size = 4, o.n_best = 3, o.max_len = 12, o.length_penalty = 0.6, o.keep_attention = true;
    expect_same_hypotheses(nmt::beam_search(*gpu, batch.src.to(Device::cuda(0)), batch.src_lengths, kBos, kEos, o),
                           nmt::beam_search(cpu, batch.src, batch.src_lengths, kBos, kEos, o));
  }
}

// An ensemble's mixture (exp, add, log on the device) decodes as on the CPU: two members of other
// attention, in float64.
TEST(CudaModelParity, EnsembleDecodingMatchesTheCpuTokenForToken) {
  LUONG_REQUIRE_CUDA();
  const auto all = variants();
  ASSERT_GE(all.size(), 2u);
  Generator init(12);
  NmtModel cpu_a(all[0].cfg, init, DType::f64), cpu_b(all[1].cfg, init, DType::f64);
  const auto gpu_a = copy_of(cpu_a, DType::f64, Device::cuda(0)), gpu_b = copy_of(cpu_b, DType::f64, Device::cuda(0));
  for (Module* m : std::initializer_list<Module*>{&cpu_a, &cpu_b, gpu_a.get(), gpu_b.get()}) m->eval();
  const nmt::Ensemble cpu({&cpu_a, &cpu_b}), gpu({gpu_a.get(), gpu_b.get()});
  const Batch batch(all[0].cfg);
  nmt::BeamOptions o;
  o.beam_size = 4, o.n_best = 3, o.max_len = 12, o.length_penalty = 0.6;
  expect_same_hypotheses(nmt::beam_search(gpu, batch.src.to(Device::cuda(0)), batch.src_lengths, kBos, kEos, o),
                         nmt::beam_search(cpu, batch.src, batch.src_lengths, kBos, kEos, o));
}

// `luong score`'s per-pair log-probabilities (the fused generator loss per row, mixed per token for an ensemble)
// on the device equal the CPU's, in float32, pair by pair in the input order.
TEST(CudaModelParity, PairScoresOfAnEnsembleMatchTheCpu) {
  LUONG_REQUIRE_CUDA();
  const auto all = variants();
  ASSERT_GE(all.size(), 2u);
  Generator init(13);
  NmtModel cpu_a(all[0].cfg, init), cpu_b(all[1].cfg, init);
  const auto gpu_a = copy_of(cpu_a, DType::f32, Device::cuda(0)), gpu_b = copy_of(cpu_b, DType::f32, Device::cuda(0));
  for (Module* m : std::initializer_list<Module*>{&cpu_a, &cpu_b, gpu_a.get(), gpu_b.get()}) m->eval();
  Generator g(4);
  // Targets of 0 to 6 tokens: an empty one (</s> alone) too, maybe.
  const nmt::Corpus corpus = random_pairs(g, 9, {19, 1, 8}, {15, 0, 6});
  for (const bool ensemble : {false, true}) {
    SCOPED_TRACE(ensemble ? "ensemble" : "one model");
    const nmt::Ensemble cpu = ensemble ? nmt::Ensemble({&cpu_a, &cpu_b}) : nmt::Ensemble(cpu_a);
    const nmt::Ensemble gpu = ensemble ? nmt::Ensemble({gpu_a.get(), gpu_b.get()}) : nmt::Ensemble(*gpu_a);
    const auto on_cpu = nmt::score_pairs(cpu, corpus, 4, Device::cpu());
    const auto on_gpu = nmt::score_pairs(gpu, corpus, 4, Device::cuda(0));
    ASSERT_EQ(on_gpu.size(), on_cpu.size());
    for (size_t i = 0; i < on_cpu.size(); ++i) {
      EXPECT_EQ(on_gpu[i].tokens, on_cpu[i].tokens) << i;
      EXPECT_NEAR(on_gpu[i].log_prob, on_cpu[i].log_prob, 1e-4 * std::abs(on_cpu[i].log_prob) + 1e-5) << i;
    }
  }
}

// `luong align`'s forced-decoding attention on the device equals the CPU's, row by row for every pair, with
// each attention variant (the local windows masked on the device too), in float32.
TEST(CudaModelParity, ForcedAttentionMatchesTheCpu) {
  LUONG_REQUIRE_CUDA();
  Generator g(5);
  const nmt::Corpus corpus = random_pairs(g, 7, {19, 1, 9}, {15, 0, 6});
  for (const auto& v : variants()) {
    SCOPED_TRACE(v.what);
    Generator init(14);
    NmtModel cpu(v.cfg, init);
    const auto gpu = copy_of(cpu, DType::f32, Device::cuda(0));
    cpu.eval(), gpu->eval();
    const auto on_cpu = nmt::forced_attention(nmt::Ensemble(cpu), corpus, 3, Device::cpu());
    const auto on_gpu = nmt::forced_attention(nmt::Ensemble(*gpu), corpus, 3, Device::cuda(0));
    ASSERT_EQ(on_gpu.size(), on_cpu.size());
    for (size_t i = 0; i < on_cpu.size(); ++i) {
      ASSERT_EQ(on_gpu[i].size(), on_cpu[i].size()) << i;
      for (size_t t = 0; t < on_cpu[i].size(); ++t) {
        ASSERT_EQ(on_gpu[i][t].size(), on_cpu[i][t].size()) << i << " " << t;
        for (size_t s = 0; s < on_cpu[i][t].size(); ++s)
          EXPECT_NEAR(on_gpu[i][t][s], on_cpu[i][t][s], 1e-4) << "pair " << i << " step " << t << " source " << s;
      }
    }
  }
}

}  // namespace
}  // namespace luong::testing
