// Beam search: beam 1 is greedy decoding, wider beams never score worse than greedy, n-best is sorted,
// and batching sentences together does not change any sentence's result.
#include "models/nmt/beam_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "models/nmt/greedy.h"
#include "tests/decode/decode_fixtures.h"

namespace luong::nmt {
namespace {

constexpr int64_t kPad = 0, kBos = 2, kEos = 3;

BeamOptions fixed_length(int64_t beam_size, int64_t max_len, int64_t n_best = 1) {
  BeamOptions o;
  o.beam_size = beam_size;
  o.max_len = max_len;
  o.n_best = n_best;
  return o;
}

TEST(BeamSearch, BeamOneEqualsGreedy) {
  for (const std::string att : {"general", "dot", "local-p"}) {
    auto model = random_model(att);
    std::vector<int64_t> lengths;
    const Tensor src = sources(lengths);
    const auto greedy = greedy_decode(*model, src, lengths, kBos, kEos, 12);
    const auto beam = beam_search(*model, src, lengths, kBos, kEos, fixed_length(1, 12));
    ASSERT_EQ(beam.size(), greedy.size());
    for (size_t i = 0; i < greedy.size(); ++i) EXPECT_EQ(beam[i][0].tokens, greedy[i]) << att << " sentence " << i;
  }
}

// Beam search is not guaranteed to be monotone in the beam size in general; on this fixed model the wider
// beam must not lose to greedy, which catches broken candidate selection or scoring.
TEST(BeamSearch, WiderBeamFindsAtLeastAsProbableHypothesesAndNBestIsSorted) {
  auto model = random_model("general");
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const auto b1 = beam_search(*model, src, lengths, kBos, kEos, fixed_length(1, 10));
  const auto b5 = beam_search(*model, src, lengths, kBos, kEos, fixed_length(5, 10, 5));
  for (size_t i = 0; i < b1.size(); ++i) {
    ASSERT_EQ(b5[i].size(), 5u);
    // When both beams find the same hypothesis its score may differ in float32 rounding: the products run
    // with 5x the rows, which BLAS may block differently (seen on an AMD EPYC with OpenBLAS's Zen kernels:
    // equal to 6 digits, more than 1e-9 apart). A real loss to greedy is orders of magnitude larger.
    EXPECT_GE(b5[i][0].score, b1[i][0].score - 1e-5) << "sentence " << i;
    for (size_t k = 1; k < b5[i].size(); ++k) EXPECT_GE(b5[i][k - 1].score, b5[i][k].score);
  }
}

TEST(BeamSearch, BatchingDoesNotChangeResults) {
  auto model = random_model("general");
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  BeamOptions o;
  o.beam_size = 3;
  o.max_len_ratio = 1.5;
  o.keep_attention = true;
  const auto batched = beam_search(*model, src, lengths, kBos, kEos, o);
  for (int64_t b = 0; b < 4; ++b) {
    const int64_t len = lengths[static_cast<size_t>(b)];
    auto row = src.select(b).to_vector();
    std::vector<int64_t> ids(row.begin(), row.begin() + len);
    const auto single = beam_search(*model, Tensor::from_ids(ids, {1, len}), {len}, kBos, kEos, o);
    EXPECT_EQ(single[0][0].tokens, batched[static_cast<size_t>(b)][0].tokens) << "sentence " << b;
    EXPECT_NEAR(single[0][0].score, batched[static_cast<size_t>(b)][0].score, 1e-5);
    // The attention of each output step covers exactly the sentence's source positions and sums to 1.
    for (const auto& a : batched[static_cast<size_t>(b)][0].attention) {
      ASSERT_EQ(static_cast<int64_t>(a.size()), len);
      double s = 0;
      for (float w : a) s += w;
      EXPECT_NEAR(s, 1.0, 1e-4);
    }
  }
}

// The scores of every complete hypothesis of one sentence by brute force, best first: every token sequence
// up to max_len, either ended by </s> or cut at max_len, scored by its summed log-probability. <pad> and <s>
// are not outputs (the decoders never generate them), so no sequence contains them.
std::vector<double> exhaustive_scores(const NmtModel& model, const std::vector<int64_t>& src_ids, int64_t max_len) {
  NoGradGuard no_grad;
  const int64_t len = static_cast<int64_t>(src_ids.size()), V = model.config().tgt_vocab;
  DecoderState state = model.select_rows(model.encode(Tensor::from_ids(src_ids, {1, len}), {len}), {0});
  std::vector<double> score{0.0};   // per live prefix (no </s> yet)
  std::vector<int64_t> last{kBos};  // its last token
  std::vector<double> complete;
  for (int64_t t = 0; t < max_len; ++t) {
    DecodeStep step = model.decode_step(state, Tensor::from_ids(last, {static_cast<int64_t>(last.size())}));
    const std::vector<double> lp = step.log_probs.data().to_vector();
    std::vector<double> next_score;
    std::vector<int64_t> next_last, parent;
    for (size_t i = 0; i < score.size(); ++i) {
      const double* row = lp.data() + static_cast<int64_t>(i) * V;
      complete.push_back(score[i] + row[kEos]);
      for (int64_t v = 0; v < V; ++v) {
        if (v == kEos || v == kPad || v == kBos) continue;
        if (t + 1 == max_len) {
          complete.push_back(score[i] + row[v]);  // cut at the limit
        } else {
          next_score.push_back(score[i] + row[v]);
          next_last.push_back(v);
          parent.push_back(static_cast<int64_t>(i));
        }
      }
    }
    if (t + 1 == max_len) break;
    state = model.select_rows(step.state, parent);
    score = std::move(next_score), last = std::move(next_last);
  }
  std::sort(complete.begin(), complete.end(), std::greater<>());
  return complete;
}

// With a beam as wide as the whole search space (8^3 live prefixes at max_len 3, vocabulary 11), beam
// search is exhaustive: its 100-best list must be the brute-force 100 best. This checks candidate selection
// (each beam's best 2K tokens, then the sentence's best 2K) far down the ranking, not just at the top.
TEST(BeamSearch, FullWidthBeamFindsTheExhaustiveNBest) {
  auto model = random_model("general");
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const int64_t max_len = 3;
  const size_t n = 100;
  const auto out = beam_search(*model, src, lengths, kBos, kEos, fixed_length(1000, max_len, n));
  for (int64_t b = 0; b < 4; ++b) {
    const auto row = src.select(b).to_vector();
    const std::vector<int64_t> ids(row.begin(), row.begin() + lengths[static_cast<size_t>(b)]);
    const std::vector<double> truth = exhaustive_scores(*model, ids, max_len);
    const auto& nbest = out[static_cast<size_t>(b)];
    ASSERT_EQ(nbest.size(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(nbest[i].score, truth[i], 1e-4) << "sentence " << b << " rank " << i;
  }
}

TEST(BeamSearch, NaNParametersGiveAClearError) {
  auto model = random_model("general");
  for (auto& [name, p] : model->named_parameters())
    if (name.find("output") != std::string::npos) p.data().fill_(std::nan(""));
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  try {
    beam_search(*model, src, lengths, kBos, kEos, fixed_length(3, 5));
    FAIL() << "beam search ranked NaN log-probabilities";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NaN log-probabilities"), std::string::npos) << e.what();
  }
  try {
    greedy_decode(*model, src, lengths, kBos, kEos, 5);
    FAIL() << "greedy decoding took the argmax of NaN log-probabilities";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NaN log-probabilities"), std::string::npos) << e.what();
  }
}

TEST(BeamSearch, LengthLimitIsRespected) {
  auto model = random_model("dot");
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  BeamOptions o;
  o.beam_size = 4;
  o.max_len_ratio = 1.0;
  const auto out = beam_search(*model, src, lengths, kBos, kEos, o);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_LE(static_cast<int64_t>(out[i][0].tokens.size()), lengths[i] + 1);
}

// A training run's validation polls for a stop before each decoding step: the poll's first `true` ends the
// search (DecodingStopped) before that step runs; a poll that never says so changes nothing.
TEST(BeamSearch, AStopPollEndsTheSearchBeforeTheNextStep) {
  auto model = random_model("dot");
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  BeamOptions o = fixed_length(3, 12);
  int polls = 0;
  o.stop = [&] { return ++polls < 0; };
  const auto polled = beam_search(*model, src, lengths, kBos, kEos, o);
  const int steps = polls;  // one poll per decoding step
  ASSERT_GE(steps, 2);
  const auto plain = beam_search(*model, src, lengths, kBos, kEos, fixed_length(3, 12));
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(polled[i][0].tokens, plain[i][0].tokens) << i;
  polls = 0;
  o.stop = [&] { return ++polls == steps; };  // before the last step
  EXPECT_THROW(beam_search(*model, src, lengths, kBos, kEos, o), DecodingStopped);
  EXPECT_EQ(polls, steps);
}

// A weakly trained model can rank <s> or <pad> first; neither is an output word, and an emitted <s> used to
// appear literally in the 1-best text. With both pushed far above every other token, greedy decoding and
// beam search (every n-best entry) still produce neither, choosing among the real words instead.
TEST(BeamSearch, NeverEmitsPadOrBos) {
  auto model = random_model("general");
  bool found = false;
  for (auto& [name, v] : model->named_parameters()) {
    if (name != "decoder.output.bias") continue;
    Tensor bias = v.data();
    bias.data<float>()[kPad] = 100.0f;
    bias.data<float>()[kBos] = 90.0f;
    bias.data<float>()[kEos] = -100.0f;  // no early stop: every output runs to the limit
    found = true;
  }
  ASSERT_TRUE(found);
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const auto contains_special = [](const std::vector<int64_t>& tokens) {
    return std::find(tokens.begin(), tokens.end(), kPad) != tokens.end() ||
           std::find(tokens.begin(), tokens.end(), kBos) != tokens.end();
  };
  const auto greedy = greedy_decode(*model, src, lengths, kBos, kEos, 8);
  for (size_t i = 0; i < greedy.size(); ++i) {
    EXPECT_EQ(greedy[i].size(), 8u) << "sentence " << i;
    EXPECT_FALSE(contains_special(greedy[i])) << "sentence " << i;
  }
  const auto beam = beam_search(*model, src, lengths, kBos, kEos, fixed_length(4, 8, 4));
  for (size_t i = 0; i < beam.size(); ++i) {
    ASSERT_EQ(beam[i].size(), 4u);
    for (const auto& h : beam[i]) EXPECT_FALSE(contains_special(h.tokens)) << "sentence " << i;
  }
}

}  // namespace
}  // namespace luong::nmt
