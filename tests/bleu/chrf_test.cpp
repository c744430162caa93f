// Corpus chrF against sacreBLEU's own numbers (tests/bleu/data/chrf.json, written by make_expected.py), and
// one case worked by hand from the definition.
#include "models/nmt/chrf.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "tests/bleu/bleu_fixture.h"
#include "tests/data/test_files.h"

namespace luong::chrf {
namespace {

using testing::bleu_data;

// sacreBLEU's layout: [hyp, ref, match] per order, the character orders, then the word orders (chrF++).
std::vector<int64_t> flattened(const ChrfStats& s, int word_order = 0) {
  std::vector<int64_t> out;
  for (int n = 0; n < kCharOrder + word_order; ++n) out.insert(out.end(), {s.hyp[n], s.ref[n], s.match[n]});
  for (int n = kCharOrder + word_order; n < kCharOrder + kMaxWordOrder; ++n)
    EXPECT_EQ(s.hyp[n] + s.ref[n] + s.match[n], 0) << "word order " << n - kCharOrder + 1 << " was not asked for";
  return out;
}

TEST(Chrf, FixturesWereMadeWithTheMatchedSacreBleuVersion) {
  const auto expected = testing::load_bleu_json("chrf.json");
  EXPECT_EQ(expected["sacrebleu_version"], bleu::kSacreBleuVersion);
  EXPECT_EQ(signature(), "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0");
  for (const auto& [name, c] : expected["cases"].items()) {
    EXPECT_EQ(signature(), c["signature"]) << name;
    EXPECT_EQ(signature(2), c["plusplus"]["signature"]) << name;
  }
}

TEST(Chrf, CorpusScoresAndSentenceStatisticsMatchSacreBleu) {
  const auto expected = testing::load_bleu_json("chrf.json");
  for (const auto& [name, c] : expected["cases"].items()) {
    SCOPED_TRACE(name);
    const auto hyps = bleu::read_lines_from_file(bleu_data(c["hyp"]));
    const auto refs = bleu::read_lines_from_file(bleu_data(c["ref"]));
    EXPECT_NEAR(corpus_chrf(hyps, refs).score, c["score"].get<double>(), 1e-9);
    ASSERT_EQ(hyps.size(), c["sentence_stats"].size());
    for (size_t i = 0; i < hyps.size(); ++i)
      EXPECT_EQ(flattened(sentence_stats(hyps[i], refs[i])), c["sentence_stats"][i].get<std::vector<int64_t>>())
          << "line " << i + 1 << ": " << hyps[i];
    // chrF++
    const auto& pp = c["plusplus"];
    EXPECT_NEAR(corpus_chrf(hyps, refs, 2).score, pp["score"].get<double>(), 1e-9);
    ASSERT_EQ(hyps.size(), pp["sentence_stats"].size());
    for (size_t i = 0; i < hyps.size(); ++i)
      EXPECT_EQ(flattened(sentence_stats(hyps[i], refs[i], 2), 2), pp["sentence_stats"][i].get<std::vector<int64_t>>())
          << "chrF++, line " << i + 1 << ": " << hyps[i];
  }
}

// Unicode whitespace (removed), code points (counted as one character each), clipping, short and empty sides;
// chrF++'s words with punctuation split off.
TEST(Chrf, CharacterHandlingMatchesSacreBleuPairByPair) {
  const auto expected = testing::load_bleu_json("chrf.json");
  ASSERT_FALSE(expected["pairs"].empty());
  for (const auto& p : expected["pairs"]) {
    const std::string h = p["hyp"], r = p["ref"];
    SCOPED_TRACE("'" + h + "' against '" + r + "'");
    EXPECT_EQ(flattened(sentence_stats(h, r)), p["stats"].get<std::vector<int64_t>>());
    EXPECT_NEAR(corpus_chrf({h}, {r}).score, p["score"].get<double>(), 1e-9);
    EXPECT_EQ(flattened(sentence_stats(h, r, 2), 2), p["stats_plusplus"].get<std::vector<int64_t>>());
    EXPECT_NEAR(corpus_chrf({h}, {r}, 2).score, p["score_plusplus"].get<double>(), 1e-9);
  }
}

// "ab" against "abcdefgh": orders 1 and 2 have n-grams on both sides (2/2 and 1/1 matched of 8 and 7 in the
// reference); orders 3-6 have none in the hypothesis and are left out of the averages. Precision 1, recall
// (2/8 + 1/7) / 2 = 11/56, F2 = 5 P R / (4 P + R) = 55/235.
TEST(Chrf, HandComputedEffectiveOrder) {
  const ChrfStats s = sentence_stats("ab", "abcdefgh");
  EXPECT_EQ(s.hyp[0], 2);
  EXPECT_EQ(s.ref[0], 8);
  EXPECT_EQ(s.match[1], 1);
  EXPECT_EQ(s.hyp[2], 0);
  EXPECT_EQ(s.ref[2], 6);
  EXPECT_NEAR(score_from_stats(s).score, 100.0 * 55.0 / 235.0, 1e-12);
  // Statistics add up before the score: two copies of a pair score as one.
  ChrfStats twice = s;
  twice += s;
  EXPECT_NEAR(score_from_stats(twice).score, score_from_stats(s).score, 1e-12);
  EXPECT_EQ(score_from_stats(ChrfStats{}).score, 0.0);  // nothing to compare: 0, not NaN
}

TEST(Chrf, FormatsLikeSacreBleuAndMismatchedCountsAreErrors) {
  ChrfScore s;
  s.score = 57.3149;
  EXPECT_EQ(s.format(1), "chrF2 = 57.3");
  EXPECT_EQ(s.format(2, signature()), "chrF2|" + signature() + " = 57.31");
  const auto j = nlohmann::json::parse(s.to_json(2));
  EXPECT_EQ(j["name"], "chrF2");
  EXPECT_EQ(j["score"], 57.31);
  EXPECT_EQ(j["nc"], "6");
  EXPECT_EQ(j["score_unrounded"], 57.3149);
  EXPECT_ERROR_HAS(corpus_chrf({"a", "b"}, {"a"}), "chrF: 2 hypotheses but 1 references");
  s.word_order = 2;
  EXPECT_EQ(s.format(2, signature(2)), "chrF2++|nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0 = 57.31");
  EXPECT_EQ(nlohmann::json::parse(s.to_json(2))["name"], "chrF2++");
  EXPECT_EQ(nlohmann::json::parse(s.to_json(2))["nw"], "2");
  EXPECT_ERROR_HAS(corpus_chrf({"a"}, {"a"}, 3), "chrF: word order 3 is not supported (0 for chrF, 2 for chrF++)");
}

}  // namespace
}  // namespace luong::chrf
