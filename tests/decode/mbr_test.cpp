// Minimum-Bayes-risk choice (models/nmt/mbr.h): the candidate the others agree with most by chrF, not the first;
// duplicates count as the draws they are; ties and a single candidate give the first.
#include "models/nmt/mbr.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"

namespace luong::nmt {
namespace {

// The candidate with the highest sum of `utility(candidate, other)` over the others, computed plainly.
template <class Utility>
size_t by_hand(const std::vector<std::string>& candidates, Utility utility) {
  double best = -1;
  size_t expected = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    double sum = 0;
    for (size_t j = 0; j < candidates.size(); ++j)
      if (i != j) sum += utility(candidates[i], candidates[j]);
    if (sum > best) best = sum, expected = i;
  }
  return expected;
}

double sentence_chrf(const std::string& h, const std::string& r) {
  return chrf::score_from_stats(chrf::sentence_stats(h, r)).score;
}
double sentence_bleu(const std::string& h, const std::string& r) {
  return bleu::score_from_stats(bleu::sentence_stats(h, r)).score;
}

TEST(Mbr, ChoosesTheCandidateTheOthersAgreeWithMost) {
  // The first (the best-scored, say) is an outlier; the third is the consensus of the rest.
  const std::vector<std::string> candidates{"zebra quartz jumps", "the cat sat on the mat", "the cat sat on a mat",
                                            "a cat sat on a mat", "the cat is on a mat"};
  const size_t chosen = mbr_choice(candidates);
  EXPECT_EQ(chosen, 2u);
  // The same as computing every candidate's mean chrF against the others by hand.
  EXPECT_EQ(chosen, by_hand(candidates, sentence_chrf));
}

TEST(Mbr, DuplicatesCountAsDrawsAndTiesGoToTheFirst) {
  // Two draws of "a b" outvote one of "x y z" and one of "a c" ("a b" is closer to "a c" than "x y z" is).
  EXPECT_EQ(mbr_choice({"x y z", "a b", "a c", "a b"}), 1u);
  EXPECT_EQ(mbr_choice({"same words", "same words"}), 0u);
  EXPECT_EQ(mbr_choice({"only one"}), 0u);
  EXPECT_EQ(mbr_choice({}), 0u);
}

// The utility decides: on these four, sentence BLEU (sacreBLEU's, 'exp' smoothing) prefers the short consensus,
// chrF the candidate whose characters the others share most (both choices checked with sacrebleu 2.6.0's BLEU and
// CHRF corpus scores of each pair).
TEST(Mbr, BleuAndChrfUtilitiesChooseDifferently) {
  const std::vector<std::string> candidates{"the cat sat on the mat", "the cat was sitting on the mat",
                                            "the cat is sitting on the mat", "the cat sat on the mats"};
  EXPECT_EQ(mbr_choice(candidates, MbrUtility::bleu), 0u);
  EXPECT_EQ(mbr_choice(candidates, MbrUtility::chrf), 1u);
  EXPECT_EQ(mbr_choice(candidates), 1u);  // chrF unless told
  EXPECT_EQ(by_hand(candidates, sentence_bleu), 0u);
  EXPECT_EQ(by_hand(candidates, sentence_chrf), 1u);
  EXPECT_EQ(parse_mbr_utility("bleu"), MbrUtility::bleu);
  EXPECT_EQ(parse_mbr_utility("chrf"), MbrUtility::chrf);
  EXPECT_THROW(parse_mbr_utility("ter"), Error);
}

}  // namespace
}  // namespace luong::nmt
