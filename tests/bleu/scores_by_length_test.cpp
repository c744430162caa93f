// BLEU and chrF by source length: which sentences land in which bucket, and that each bucket is scored as the
// corpus of its own sentences (against every reference set), independently of the others.
#include "models/nmt/scores_by_length.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "framework/core/error.h"

namespace luong::nmt {
namespace {

// A source line of `n` words.
std::string words(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? " w" : "w") + std::to_string(i);
  return s;
}

TEST(ScoresByLength, SourceWordsAreWhitespaceSeparatedTokens) {
  EXPECT_EQ(source_words(""), 0);
  EXPECT_EQ(source_words("   "), 0);
  EXPECT_EQ(source_words("a"), 1);
  EXPECT_EQ(source_words("  a  b\tc "), 3);
  EXPECT_EQ(source_words("Zwei Männer , die reden ."), 6);
}

TEST(ScoresByLength, EachBucketIsScoredAsItsOwnCorpus) {
  // Lengths 3, 12, 5, 25, 10, 11 with width 10: 1-10 holds lines 0, 2, 4; 11-20 lines 1, 5; 21-30 line 3.
  const std::vector<std::string> src = {words(3), words(12), words(5), words(25), words(10), words(11)};
  const std::vector<std::string> hyp = {"the cat sat on the mat",    "a man rides a horse",
                                        "two dogs play in snow",     "completely wrong output here",
                                        "children play in the park", "a woman is reading"};
  const std::vector<std::string> ref1 = {"the cat sat on the mat",    "a man is riding a horse",
                                         "two dogs play in the snow", "a long sentence about something else",
                                         "kids play in a park",       "a woman reads a book"};
  const std::vector<std::string> ref2 = {"a cat sat on a mat",   "a man rides a brown horse",
                                         "two dogs are playing", "another reference entirely",
                                         "children are playing", "a lady is reading"};
  const auto buckets = scores_by_source_length(src, hyp, {ref1, ref2}, 10, 2);
  ASSERT_EQ(buckets.size(), 3u);
  const std::vector<std::vector<size_t>> lines = {{0, 2, 4}, {1, 5}, {3}};
  const int64_t first[] = {1, 11, 21}, last[] = {10, 20, 30};
  for (size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(buckets[b].first, first[b]);
    EXPECT_EQ(buckets[b].last, last[b]);
    EXPECT_EQ(buckets[b].sentences, lines[b].size());
    std::vector<std::string> h, r1, r2;
    for (size_t i : lines[b]) h.push_back(hyp[i]), r1.push_back(ref1[i]), r2.push_back(ref2[i]);
    const bleu::BleuScore expected = bleu::corpus_bleu(h, {r1, r2});
    EXPECT_DOUBLE_EQ(buckets[b].bleu.score, expected.score) << b;
    EXPECT_EQ(buckets[b].bleu.hyp_len, expected.hyp_len) << b;
    EXPECT_EQ(buckets[b].bleu.nrefs, 2);
    EXPECT_DOUBLE_EQ(buckets[b].chrf.score, chrf::corpus_chrf(h, {r1, r2}, 2).score) << b;
    EXPECT_EQ(buckets[b].chrf.word_order, 2);
  }
  // The buckets differ (a perfect short sentence, a wrong long one), so grouping does change the scores.
  EXPECT_GT(buckets[0].bleu.score, buckets[2].bleu.score);
  EXPECT_EQ(buckets[2].bleu.score, 0.0);

  const std::string table = format_length_table(buckets);
  EXPECT_EQ(table.substr(0, table.find('\n')), "source words  sentences    BLEU    chrF  len ratio");
  EXPECT_NE(table.find("\n21-30                 1    0.00"), std::string::npos) << table;
  const nlohmann::json j = length_buckets_json(buckets);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[1]["first"], 11);
  EXPECT_EQ(j[1]["sentences"], 2);
  EXPECT_DOUBLE_EQ(j[1]["bleu"].get<double>(), buckets[1].bleu.score);
}

TEST(ScoresByLength, EmptyBucketsAreLeftOutAndEmptySourcesCountInTheFirst) {
  const std::vector<std::string> src = {"", words(1), words(2), words(9)};
  const std::vector<std::string> hyp = {"", "a", "a b", "a b c"};
  const auto by_two = scores_by_source_length(src, hyp, {hyp}, 2);
  ASSERT_EQ(by_two.size(), 2u);  // 1-2 (with the empty line) and 9-10; nothing between
  EXPECT_EQ(by_two[0].sentences, 3u);
  EXPECT_EQ(by_two[1].first, 9);
  EXPECT_EQ(by_two[1].last, 10);
  const auto by_one = scores_by_source_length(src, hyp, {hyp}, 1);
  ASSERT_EQ(by_one.size(), 3u);
  EXPECT_EQ(by_one[0].sentences, 2u);
  EXPECT_EQ(by_one[2].first, 9);
  EXPECT_THROW(scores_by_source_length(src, hyp, {hyp}, 0), Error);
  EXPECT_THROW(scores_by_source_length(src, {"a"}, {hyp}, 2), Error);
}

}  // namespace
}  // namespace luong::nmt
