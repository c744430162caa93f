// BLEU and chrF against several references per segment, against sacreBLEU's own numbers for hyp.txt scored on
// ref.txt and ref2.txt (expected.json, "multi_reference"; make_expected.py says how ref2.txt exercises the
// closest reference length and its tie).
#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"
#include "tests/bleu/bleu_fixture.h"
#include "tests/support/error_of.h"

namespace luong {
namespace {

using testing::bleu_data;

struct MultiReference {
  nlohmann::json expected = testing::load_bleu_json("expected.json")["multi_reference"];
  std::vector<std::string> hyps = bleu::read_lines_from_file(bleu_data(expected["hyp"]));
  std::vector<std::vector<std::string>> refs = [this] {
    std::vector<std::vector<std::string>> out;
    for (const auto& name : expected["refs"]) out.push_back(bleu::read_lines_from_file(bleu_data(name)));
    return out;
  }();
  std::vector<std::string> refs_of(size_t i) const { return {refs[0][i], refs[1][i]}; }
};

TEST(MultiReferenceBleu, SentenceStatisticsAndCorpusScoreMatchSacreBleu) {
  const MultiReference m;
  ASSERT_EQ(m.refs.size(), 2u);
  const auto& e = m.expected["bleu"];
  ASSERT_EQ(m.hyps.size(), e["sentence_stats"].size());
  for (size_t i = 0; i < m.hyps.size(); ++i) {
    const bleu::BleuStats s = bleu::sentence_stats(m.hyps[i], m.refs_of(i));
    std::vector<int64_t> got = {s.hyp_len, s.ref_len};
    got.insert(got.end(), s.correct.begin(), s.correct.end());
    got.insert(got.end(), s.total.begin(), s.total.end());
    EXPECT_EQ(got, e["sentence_stats"][i].get<std::vector<int64_t>>()) << "line " << i + 1 << ": " << m.hyps[i];
  }
  const bleu::BleuScore score = bleu::corpus_bleu(m.hyps, m.refs);
  EXPECT_NEAR(score.score, e["score"].get<double>(), 1e-9);
  EXPECT_EQ(score.nrefs, 2);
  EXPECT_EQ(bleu::signature(2), e["signature"].get<std::string>());
  EXPECT_EQ(score.format(1, bleu::signature(2)), e["cli_text"].get<std::string>());
  // A second reference can only add matches and bring the reference length closer.
  EXPECT_GT(score.score, bleu::corpus_bleu(m.hyps, m.refs[0]).score);
}

TEST(MultiReferenceBleu, OneReferenceSetIsTheSingleReferenceScore) {
  const MultiReference m;
  const bleu::BleuScore one = bleu::corpus_bleu(m.hyps, std::vector<std::vector<std::string>>{m.refs[0]});
  const bleu::BleuScore single = bleu::corpus_bleu(m.hyps, m.refs[0]);
  EXPECT_EQ(one.score, single.score);
  EXPECT_EQ(one.nrefs, 1);
  // The same reference twice changes nothing but the signature's count.
  const bleu::BleuScore twice = bleu::corpus_bleu(m.hyps, std::vector<std::vector<std::string>>{m.refs[0], m.refs[0]});
  EXPECT_EQ(twice.score, single.score);
  EXPECT_EQ(twice.nrefs, 2);
}

TEST(MultiReferenceChrf, EachSentenceCountsAgainstItsBestReferenceAsSacreBleuPicksIt) {
  const MultiReference m;
  const auto& e = m.expected["chrf"];
  ASSERT_EQ(m.hyps.size(), e["sentence_stats"].size());
  for (size_t i = 0; i < m.hyps.size(); ++i) {
    const chrf::ChrfStats s = chrf::sentence_stats(m.hyps[i], m.refs_of(i));
    std::vector<int64_t> got;
    for (int n = 0; n < chrf::kCharOrder; ++n) got.insert(got.end(), {s.hyp[n], s.ref[n], s.match[n]});
    EXPECT_EQ(got, e["sentence_stats"][i].get<std::vector<int64_t>>()) << "line " << i + 1 << ": " << m.hyps[i];
  }
  const chrf::ChrfScore score = chrf::corpus_chrf(m.hyps, m.refs);
  EXPECT_NEAR(score.score, e["score"].get<double>(), 1e-9);
  EXPECT_EQ(chrf::signature(0, 2), e["signature"].get<std::string>());
  const chrf::ChrfScore plus = chrf::corpus_chrf(m.hyps, m.refs, 2);
  EXPECT_NEAR(plus.score, m.expected["chrf_plusplus"]["score"].get<double>(), 1e-9);
  EXPECT_EQ(chrf::signature(2, 2), m.expected["chrf_plusplus"]["signature"].get<std::string>());
}

TEST(MultiReference, ReferenceSetsOfAnotherLengthAreErrors) {
  const MultiReference m;
  std::vector<std::vector<std::string>> short_second = m.refs;
  short_second[1].pop_back();
  const std::string bleu_error = testing::error_of([&] { bleu::corpus_bleu(m.hyps, short_second); });
  EXPECT_NE(bleu_error.find("37 hypotheses but 36 references in reference set 2"), std::string::npos) << bleu_error;
  const std::string chrf_error = testing::error_of([&] { chrf::corpus_chrf(m.hyps, short_second); });
  EXPECT_NE(chrf_error.find("37 hypotheses but 36 references in reference set 2"), std::string::npos) << chrf_error;
}

}  // namespace
}  // namespace luong
