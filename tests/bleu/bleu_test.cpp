// Corpus BLEU against sacreBLEU's own numbers (tests/bleu/data/expected.json).
#include "models/nmt/bleu.h"

#include <cmath>
#include <sstream>

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "tests/bleu/bleu_fixture.h"

namespace luong::bleu {
namespace {

using testing::bleu_data;

TEST(Bleu, FixturesWereMadeWithTheMatchedSacreBleuVersion) {
  EXPECT_EQ(testing::load_bleu_json("expected.json")["sacrebleu_version"], kSacreBleuVersion);
  EXPECT_EQ(signature(), "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
}

TEST(Bleu, CorpusScoresMatchSacreBleu) {
  const auto expected = testing::load_bleu_json("expected.json");
  for (const auto& [name, c] : expected["cases"].items()) {
    SCOPED_TRACE(name);
    const auto hyps = read_lines_from_file(bleu_data(c["hyp"]));
    const auto refs = read_lines_from_file(bleu_data(c["ref"]));
    const BleuScore s = corpus_bleu(hyps, refs);
    EXPECT_NEAR(s.score, c["score"].get<double>(), 1e-9);
    for (int n = 0; n < kMaxOrder; ++n) {
      EXPECT_NEAR(s.precisions[n], c["precisions"][n].get<double>(), 1e-9) << "order " << n + 1;
      EXPECT_EQ(s.counts[n], c["counts"][n].get<int64_t>()) << "order " << n + 1;
      EXPECT_EQ(s.totals[n], c["totals"][n].get<int64_t>()) << "order " << n + 1;
    }
    EXPECT_NEAR(s.bp, c["bp"].get<double>(), 1e-12);
    EXPECT_NEAR(s.ratio, c["ratio"].get<double>(), 1e-12);
    EXPECT_EQ(s.hyp_len, c["hyp_len"].get<int64_t>());
    EXPECT_EQ(s.ref_len, c["ref_len"].get<int64_t>());
    EXPECT_EQ(s.format(), c["line_width2"].get<std::string>());
    EXPECT_EQ(signature(), c["signature"].get<std::string>());
  }
}

TEST(Bleu, SentenceStatisticsMatchSacreBleuLineByLine) {
  const auto expected = testing::load_bleu_json("expected.json");
  for (const auto& [name, c] : expected["cases"].items()) {
    const auto hyps = read_lines_from_file(bleu_data(c["hyp"]));
    const auto refs = read_lines_from_file(bleu_data(c["ref"]));
    ASSERT_EQ(hyps.size(), c["sentence_stats"].size()) << name;
    for (size_t i = 0; i < hyps.size(); ++i) {
      const BleuStats s = sentence_stats(hyps[i], refs[i]);
      std::vector<int64_t> got = {s.hyp_len, s.ref_len};
      got.insert(got.end(), s.correct.begin(), s.correct.end());
      got.insert(got.end(), s.total.begin(), s.total.end());
      EXPECT_EQ(got, c["sentence_stats"][i].get<std::vector<int64_t>>()) << name << " line " << i + 1 << ": "
                                                                          << hyps[i];
    }
  }
}

TEST(Bleu, HandComputedSmoothing) {
  // 1-grams 3/4, 2-grams 1/3, 3-grams 0/2 -> 100/(2*2), 4-grams 0/1 -> 100/(4*1); hyp 4 = ref 4 so BP 1.
  BleuStats st;
  st.hyp_len = st.ref_len = 4;
  st.correct = {3, 1, 0, 0};
  st.total = {4, 3, 2, 1};
  const BleuScore s = score_from_stats(st);
  EXPECT_DOUBLE_EQ(s.precisions[2], 25.0);
  EXPECT_DOUBLE_EQ(s.precisions[3], 25.0);
  const double expected = std::exp((std::log(75.0) + std::log(100.0 / 3) + 2 * std::log(25.0)) / 4);
  EXPECT_NEAR(s.score, expected, 1e-12);
  EXPECT_EQ(s.format(2, "sig"), "BLEU|sig = 35.36 75.0/33.3/25.0/25.0 (BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)");
}

TEST(Bleu, MismatchedCountsAndInvalidUtf8AreErrors) {
  try {
    corpus_bleu({"a", "b"}, {"a"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 hypotheses but 1 references"), std::string::npos) << e.what();
  }
  std::istringstream bad("fine\nbroken \xC3\x28 here\n");
  try {
    read_lines(bad, "hyp.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hyp.txt line 2: invalid UTF-8 at byte 7 of the line"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_lines_from_file(bleu_data("does-not-exist.txt")), Error);
}

TEST(Bleu, ReadsLinesLikeSacreBleu) {
  std::istringstream in("a b  \r\nlast\xC2\xA0\n\n  x");
  EXPECT_EQ(read_lines(in, "s"), std::vector<std::string>({"a b", "last", "", "  x"}));
  std::istringstream empty("");
  EXPECT_TRUE(read_lines(empty, "s").empty());
}

}  // namespace
}  // namespace luong::bleu
