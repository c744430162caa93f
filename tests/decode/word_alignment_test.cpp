// Word alignments from attention: subword pieces and glued punctuation count as the whitespace-separated words
// of the text they detokenize to, each target word's weights are its pieces' rows summed over each source
// word's pieces and averaged, and the hard and threshold forms pick the pairs Marian's --alignment would.
#include "models/nmt/word_alignment.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "framework/core/error.h"
#include "models/nmt/data/tokenizer.h"

namespace luong::nmt {
namespace {

const std::string J(kJoiner);

TEST(WordAlignment, DetokenizedSpansCoverEachTokensBytes) {
  const Tokenizer tok;
  std::vector<std::pair<size_t, size_t>> spans;
  const std::string text = tok.detokenize({"Das", "Schwimm" + J, "brille", "ist", "blau", J + "."}, &spans);
  ASSERT_EQ(text, "Das Schwimmbrille ist blau.");
  EXPECT_EQ(spans, (std::vector<std::pair<size_t, size_t>>{{0, 3}, {4, 11}, {11, 17}, {18, 21}, {22, 26}, {26, 27}}));
  EXPECT_EQ(words_of_spans(text, spans),
            (std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {1, 1}, {2, 2}, {3, 3}, {3, 3}}));
  // A lone joiner contributes no bytes and so no word; a token with a space in it (a --dictionary entry)
  // covers two.
  const std::string glued = tok.detokenize({"a", J, "b", "New York"}, &spans);
  ASSERT_EQ(glued, "ab New York");
  EXPECT_EQ(words_of_spans(glued, spans), (std::vector<std::pair<int, int>>{{0, 0}, {-1, -1}, {0, 0}, {1, 2}}));
}

TEST(WordAlignment, PiecesOfAWordPoolTheirAttention) {
  const Tokenizer tok;
  const std::vector<std::string> src{"Das", "Schwimm" + J, "brille", "ist", "blau", J + "."};
  const std::vector<std::string> tgt{"The", "gog" + J, "gles", "are", "blue", J + "."};
  // One row per target token and one for </s>, columns over the six source tokens.
  const std::vector<std::vector<float>> att{
      {0.9f, 0.05f, 0.05f, 0.0f, 0.0f, 0.0f},  // The      -> Das
      {0.0f, 0.6f, 0.2f, 0.2f, 0.0f, 0.0f},    // gog￭     -> Schwimmbrille 0.8, ist 0.2
      {0.0f, 0.3f, 0.3f, 0.4f, 0.0f, 0.0f},    // gles     -> Schwimmbrille 0.6 (ist, 0.4, is the best piece)
      {0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f},    // are      -> ist
      {0.0f, 0.0f, 0.0f, 0.2f, 0.5f, 0.3f},    // blue     -> blau. 0.8
      {0.0f, 0.0f, 0.0f, 0.0f, 0.4f, 0.6f},    // ￭.       -> blau. 1.0
      {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}};   // </s>: not a word
  const auto w = word_attention(tok, src, tgt, att);
  ASSERT_EQ(w.size(), 4u);          // The goggles are blue.
  ASSERT_EQ(w[0].size(), 4u);       // Das Schwimmbrille ist blau.
  EXPECT_NEAR(w[1][1], 0.7, 1e-6);  // (0.8 + 0.6) / 2
  EXPECT_NEAR(w[1][2], 0.3, 1e-6);  // (0.2 + 0.4) / 2
  EXPECT_NEAR(w[3][3], 0.9, 1e-6);
  EXPECT_NEAR(w[3][2], 0.1, 1e-6);
  for (const auto& row : w) {
    double sum = 0;
    for (double x : row) sum += x;
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // Hard: word by word, although the piece "gles" alone points at "ist".
  EXPECT_EQ(word_alignment(w, 0.0), "0-0 1-1 2-2 3-3");
  // A threshold keeps every pair with that much weight, several or none per target word.
  EXPECT_EQ(word_alignment(w, 0.3), "0-0 1-1 2-1 2-2 3-3");
  EXPECT_EQ(word_alignment(w, 1.0), "2-2");  // "are" alone has all its weight on one word
}

TEST(WordAlignment, ATokenOfSeveralWordsAlignsEachAndEmptySidesGiveNothing) {
  const Tokenizer tok;
  const std::vector<std::vector<float>> att{{0.2f, 0.8f}, {1.0f, 0.0f}, {0.5f, 0.5f}};
  const auto w = word_attention(tok, {"in", "newyork"}, {"New York", "in"}, att);
  EXPECT_EQ(word_alignment(w, 0.0), "1-0 1-1 0-2");
  EXPECT_EQ(word_alignment(word_attention(tok, {}, {}, {}), 0.0), "");
  EXPECT_EQ(word_alignment(word_attention(tok, {"a"}, {}, {{1.0f}}), 0.0), "");
  // Rows that do not match the tokens are a caller's error, named.
  EXPECT_THROW(word_attention(tok, {"a", "b"}, {"x"}, {{1.0f}}), Error);
  EXPECT_THROW(word_attention(tok, {"a"}, {"x", "y"}, {{1.0f}}), Error);
}

}  // namespace
}  // namespace luong::nmt
