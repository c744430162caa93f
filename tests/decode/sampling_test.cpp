// Sampling translations (models/nmt/sampling.h): draws follow the model's distribution (tempered, cut to its
// top k), top-1 or a near-zero temperature is greedy decoding, a sentence's samples depend on its seed and index
// alone (not its batch), and each sample's log-probability is what the model gives its tokens.
#include "models/nmt/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "models/nmt/greedy.h"
#include "tests/decode/decode_fixtures.h"

namespace luong::nmt {
namespace {

constexpr int64_t kBos = 2, kEos = 3;

BeamOptions limits(int64_t samples, int64_t max_len = 12) {
  BeamOptions o;
  o.max_len = max_len;
  o.n_best = samples;
  return o;
}

SamplingOptions sampling(double temperature = 1.0, int64_t top_k = 0, uint64_t seed = 5) {
  return {true, temperature, top_k, seed};
}

std::vector<uint64_t> ids(std::initializer_list<uint64_t> list) { return list; }

TEST(Sampling, UniformsCoverTheUnitIntervalEvenly) {
  double sum = 0, lo = 1, hi = 0;
  std::set<double> seen;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double u = sampling_uniform(7, static_cast<uint64_t>(i % 10), static_cast<uint64_t>(i / 10), 3);
    sum += u, lo = std::min(lo, u), hi = std::max(hi, u);
    seen.insert(u);
  }
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_NEAR(sum / n, 0.5, 0.01);
  EXPECT_EQ(seen.size(), static_cast<size_t>(n));  // distinct counters, distinct draws
  EXPECT_NE(sampling_uniform(7, 1, 0, 3), sampling_uniform(8, 1, 0, 3));
}

// The frequencies of 40,000 draws from one row against exp(lp / T) renormalised over the candidates.
TEST(Sampling, DrawsFollowTheTemperedAndCutDistribution) {
  const std::vector<float> row{std::log(0.05f), std::log(0.4f), std::log(0.3f), std::log(0.15f), std::log(0.1f)};
  const std::vector<int64_t> excluded{0};  // token 0 is never drawn, as <pad> is not
  for (const auto& [temperature, top_k] : {std::pair{1.0, int64_t{0}}, {0.5, 0}, {2.0, 0}, {1.0, 2}}) {
    std::vector<double> expected(row.size(), 0.0);
    std::vector<int64_t> candidates{1, 2, 3, 4};
    if (top_k == 2) candidates = {1, 2};
    double total = 0;
    for (int64_t v : candidates)
      total += expected[static_cast<size_t>(v)] = std::exp(row[static_cast<size_t>(v)] / temperature);
    std::map<int64_t, int> counts;
    const int n = 40000;
    for (int i = 0; i < n; ++i)
      ++counts[sample_token(row.data(), 5, sampling(temperature, top_k), sampling_uniform(11, 0, i, 0), excluded, 0,
                            0)];
    EXPECT_EQ(counts.count(0), 0u);
    for (int64_t v = 1; v < 5; ++v)
      EXPECT_NEAR(counts[v] / static_cast<double>(n), expected[static_cast<size_t>(v)] / total, 0.01)
          << "token " << v << ", temperature " << temperature << ", top_k " << top_k;
  }
  const std::vector<float> bad{0.0f, std::nanf(""), -1.0f};
  EXPECT_THROW(sample_token(bad.data(), 3, sampling(), 0.5, {}, 4, 1), Error);
}

TEST(Sampling, TopOneAndAColdTemperatureAreGreedyDecoding) {
  auto model = random_model("general");
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const auto greedy = greedy_decode(*model, src, lengths, kBos, kEos, 12);
  const Ensemble one(*model);
  for (const SamplingOptions& o : {sampling(1.0, 1), sampling(1e-4, 0)}) {
    const auto drawn = sample_translations(one, src, lengths, kBos, kEos, limits(3), o, ids({0, 1, 2, 3}));
    for (size_t b = 0; b < greedy.size(); ++b)
      for (const Hypothesis& h : drawn[b]) EXPECT_EQ(h.tokens, greedy[b]) << "sentence " << b;
  }
}

// A sentence's samples are keyed by (seed, its index, sample, step): decoded alone or with others, first or
// last in its batch, it draws the same tokens.
TEST(Sampling, ASentencesSamplesDependOnItsSeedAndIndexNotOnItsBatch) {
  auto model = random_model("general");
  const Ensemble one(*model);
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const auto together =
      sample_translations(one, src, lengths, kBos, kEos, limits(4), sampling(), ids({10, 11, 12, 13}));
  for (int64_t b = 0; b < 4; ++b) {
    const Tensor alone_src = src.narrow(b, 1);
    const auto alone = sample_translations(one, alone_src, {lengths[static_cast<size_t>(b)]}, kBos, kEos, limits(4),
                                           sampling(), ids({10 + static_cast<uint64_t>(b)}));
    ASSERT_EQ(alone[0].size(), 4u);
    for (size_t n = 0; n < 4; ++n)
      EXPECT_EQ(alone[0][n].tokens, together[static_cast<size_t>(b)][n].tokens) << "sentence " << b << " sample " << n;
  }
  // Another seed, or another index for the same sentence, draws other samples (compared over all of them).
  const auto reseeded =
      sample_translations(one, src, lengths, kBos, kEos, limits(4), sampling(1.0, 0, 6), ids({10, 11, 12, 13}));
  const auto moved = sample_translations(one, src, lengths, kBos, kEos, limits(4), sampling(), ids({20, 21, 22, 23}));
  int differ_seed = 0, differ_index = 0;
  for (size_t b = 0; b < 4; ++b)
    for (size_t n = 0; n < 4; ++n) {
      differ_seed += reseeded[b][n].tokens != together[b][n].tokens;
      differ_index += moved[b][n].tokens != together[b][n].tokens;
    }
  EXPECT_GT(differ_seed, 4);
  EXPECT_GT(differ_index, 4);
}

// Teacher-forcing each sample through the model gives back its log-probability (its tokens, then </s> when it
// ended there); samples come best score first.
TEST(Sampling, EachSamplesLogProbabilityIsTheModelsForItsTokens) {
  auto model = random_model("general");
  const Ensemble one(*model);
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const int64_t max_len = 8;
  const auto drawn =
      sample_translations(one, src, lengths, kBos, kEos, limits(3, max_len), sampling(1.3), ids({0, 1, 2, 3}));
  NoGradGuard no_grad;
  for (int64_t b = 0; b < 4; ++b) {
    for (size_t n = 0; n < drawn[static_cast<size_t>(b)].size(); ++n) {
      const Hypothesis& h = drawn[static_cast<size_t>(b)][n];
      if (n > 0) {
        EXPECT_GE(drawn[static_cast<size_t>(b)][n - 1].score, h.score);
      }
      std::vector<int64_t> forced = h.tokens;
      if (static_cast<int64_t>(forced.size()) < max_len) forced.push_back(kEos);  // it ended with </s>
      EnsembleState state = one.encode(src.narrow(b, 1), {lengths[static_cast<size_t>(b)]});
      int64_t prev = kBos;
      double log_prob = 0;
      for (int64_t token : forced) {
        EnsembleStep step = one.decode_step(state, Tensor::from_ids({prev}, {1}));
        log_prob += static_cast<double>(step.log_probs.data().to(DType::f32).data<float>()[token]);
        state = std::move(step.state);
        prev = token;
      }
      EXPECT_NEAR(h.log_prob, log_prob, 1e-4 * std::max(1.0, std::abs(log_prob)))
          << "sentence " << b << " sample " << n;
      EXPECT_DOUBLE_EQ(h.score, h.log_prob);  // length_penalty 0
    }
  }
}

}  // namespace
}  // namespace luong::nmt
