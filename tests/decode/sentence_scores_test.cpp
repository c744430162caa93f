// Per-pair scores (models/nmt/sentence_scores.h, `luong score`): each is the sum of the log-probabilities that
// teacher-forced decoder steps (a path of their own: step by step, log-softmax of the full logits) give the
// target's tokens and </s>, for one model and for an ensemble (the log of the members' mean probability per
// token); they do not depend on the batching; they add up to evaluate_loss.
#include "models/nmt/sentence_scores.h"

#include <gtest/gtest.h>

#include <cmath>

#include "models/nmt/data/vocabulary.h"
#include "models/nmt/ensemble_loss.h"
#include "models/nmt/nmt_task.h"
#include "tests/decode/decode_fixtures.h"

namespace luong::nmt {
namespace {

// Seven pairs of varied lengths, one with an empty target (</s> alone is scored), in no length order.
Corpus varied_pairs() {
  Corpus c;
  const std::vector<std::vector<int64_t>> src{{4, 5, 6}, {7, 8}, {9, 10, 11, 12, 4}, {5}, {6, 7, 8, 9}, {12}, {4, 4}};
  const std::vector<std::vector<int64_t>> tgt{{4, 5}, {6, 7, 8, 9}, {10}, {5, 6, 7}, {}, {8, 9, 10, 4, 5, 6}, {7}};
  for (size_t i = 0; i < src.size(); ++i) c.examples.push_back({src[i], tgt[i], static_cast<int64_t>(i) + 1});
  return c;
}

// log p(target | source) of each member, by teacher-forced decoder steps, per token (its </s> last).
std::vector<std::vector<double>> stepwise_log_probs(const std::vector<const NmtModel*>& members, const Example& e) {
  NoGradGuard no_grad;
  const std::vector<int64_t> len{static_cast<int64_t>(e.src.size())};
  const Tensor src = Tensor::from_ids(to_ids(e.src), {1, len[0]});
  std::vector<int64_t> targets = to_ids(e.tgt);
  targets.push_back(Vocabulary::kEos);
  std::vector<std::vector<double>> out(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    DecoderState state = members[m]->encode(src, len);
    int64_t prev = Vocabulary::kBos;
    for (const int64_t y : targets) {
      const DecodeStep step = members[m]->decode_step(state, Tensor::from_ids({prev}, {1}));
      state = step.state;
      const Tensor lp = step.log_probs.data().to(DType::f64);
      out[m].push_back(lp.data<double>()[y]);
      prev = y;
    }
  }
  return out;
}

TEST(SentenceScores, EachIsTheSumOfTheDecoderStepsLogProbabilities) {
  const auto model = random_model("general", 7, 2, 16);
  const Corpus corpus = varied_pairs();
  const std::vector<PairScore> scores = score_pairs(Ensemble(*model), corpus, 3, Device::cpu());
  ASSERT_EQ(scores.size(), corpus.examples.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const std::vector<double> lp = stepwise_log_probs({model.get()}, corpus.examples[i])[0];
    double expected = 0;
    for (const double x : lp) expected += x;
    EXPECT_EQ(scores[i].tokens, static_cast<int64_t>(corpus.examples[i].tgt.size()) + 1) << i;
    EXPECT_NEAR(scores[i].log_prob, expected, 1e-5 * std::abs(expected) + 1e-6) << i;
    EXPECT_LT(scores[i].log_prob, 0.0) << i;
  }
}

TEST(SentenceScores, AnEnsembleScoresTheLogOfTheMembersMeanProbabilityPerToken) {
  const auto a = random_model("general", 7, 2, 16), b = random_model("dot", 8, 1, 12);
  const Corpus corpus = varied_pairs();
  const std::vector<PairScore> scores = score_pairs(Ensemble({a.get(), b.get()}), corpus, 2, Device::cpu());
  const std::vector<PairScore> alone_a = score_pairs(Ensemble(*a), corpus, 2, Device::cpu());
  const std::vector<PairScore> twice_a = score_pairs(Ensemble({a.get(), a.get()}), corpus, 2, Device::cpu());
  for (size_t i = 0; i < scores.size(); ++i) {
    const auto lp = stepwise_log_probs({a.get(), b.get()}, corpus.examples[i]);
    double expected = 0;
    for (size_t t = 0; t < lp[0].size(); ++t) expected += mean_probability_log({lp[0][t], lp[1][t]});
    EXPECT_NEAR(scores[i].log_prob, expected, 1e-5 * std::abs(expected) + 1e-6) << i;
    // One model twice is that model.
    EXPECT_NEAR(twice_a[i].log_prob, alone_a[i].log_prob, 1e-12 * std::abs(alone_a[i].log_prob)) << i;
  }
}

TEST(SentenceScores, DoNotDependOnTheBatchAndAddUpToEvaluateLoss) {
  const auto model = random_model("concat", 3, 2, 12);
  const Corpus corpus = varied_pairs();
  const Ensemble one(*model);
  const std::vector<PairScore> alone = score_pairs(one, corpus, 1, Device::cpu());
  int64_t calls = 0;
  size_t last = 0;
  for (const int64_t batch : {2, 3, 7, 100}) {
    const std::vector<PairScore> batched = score_pairs(one, corpus, batch, Device::cpu(), [&](size_t done) {
      EXPECT_GT(done, last);
      last = done, ++calls;
    });
    EXPECT_EQ(last, corpus.examples.size());
    last = 0;
    for (size_t i = 0; i < alone.size(); ++i) {
      EXPECT_EQ(batched[i].tokens, alone[i].tokens);
      EXPECT_NEAR(batched[i].log_prob, alone[i].log_prob, 1e-5 * std::abs(alone[i].log_prob)) << batch << " " << i;
    }
  }
  EXPECT_EQ(calls, 4 + 3 + 1 + 1);  // one per batch
  double sum = 0;
  int64_t tokens = 0;
  for (const PairScore& s : alone) sum += s.log_prob, tokens += s.tokens;
  const ValidationResult v = evaluate_loss(*model, corpus, 3, Device::cpu());
  EXPECT_EQ(v.tokens, tokens);
  EXPECT_NEAR(v.loss_sum, -sum, 1e-5 * std::abs(sum));
}

TEST(SentenceScores, AnEmptySourceIsRefusedNamingItsLine) {
  const auto model = random_model("general");
  Corpus corpus = varied_pairs();
  corpus.examples.push_back(ExampleIds{{}, {5}, 12});
  try {
    score_pairs(Ensemble(*model), corpus, 4, Device::cpu());
    ADD_FAILURE() << "an empty source was scored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 12 has an empty source"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace luong::nmt
