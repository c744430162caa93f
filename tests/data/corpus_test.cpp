// Reading parallel text: errors that name file and line, empty-line and max-length skipping, encoding.
#include <gtest/gtest.h>

#include "models/nmt/data/corpus.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using testing::TempDir;

TEST(TextReader, ReadsLinesWithCrlfBomAndMissingFinalNewline) {
  TempDir dir;
  EXPECT_EQ(read_lines(dir.file("a", "\xEF\xBB\xBF" "eins\r\nzwei\n\ndrei")),
            (std::vector<std::string>{"eins", "zwei", "", "drei"}));
  EXPECT_TRUE(read_lines(dir.file("empty", "")).empty());
}

TEST(TextReader, InvalidUtf8NamesFileLineAndByteOffset) {
  TempDir dir;
  const std::string f = dir.file("train.de", "gut\nGrüße\nschl\xE4gt hier\n");  // Latin-1 ä on line 3
  EXPECT_ERROR_HAS(read_lines(f), "train.de' line 3", "invalid UTF-8 at byte 4 of the line", "(byte 16 of the file)");
}

TEST(TextReader, UnreadableFilesAreNamed) {
  TempDir dir;
  EXPECT_ERROR_HAS(read_lines(dir.path("nope.en")), "nope.en' cannot be read", "No such file");
  EXPECT_ERROR_HAS(read_lines(dir.path("")), "cannot be read", "directory");
}

TEST(ParallelReader, MismatchedLineCountsNameBothFiles) {
  TempDir dir;
  const std::string s = dir.file("x.en", "a\nb\nc\n"), t = dir.file("x.de", "a\nb\n");
  EXPECT_ERROR_HAS(read_parallel(s, t), "x.en' has 3 lines", "x.de' has 2 lines");
}

TEST(ParallelReader, SkipsPairsWithAnEmptySideAndCountsThem) {
  TempDir dir;
  const std::string s = dir.file("x.en", "one\n\nthree\nfour\n   \nsix\n");
  const std::string t = dir.file("x.de", "eins\nzwei\n\nvier\nfünf\nsechs\n");
  const ParallelText p = read_parallel(s, t);
  EXPECT_EQ(p.lines, 6);
  EXPECT_EQ(p.empty_skipped, 3);
  EXPECT_EQ(p.src, (std::vector<std::string>{"one", "four", "six"}));
  EXPECT_EQ(p.tgt, (std::vector<std::string>{"eins", "vier", "sechs"}));
  EXPECT_EQ(p.line_numbers, (std::vector<int64_t>{1, 4, 6}));
}

TEST(Corpus, EncodesAndSkipsOverLongPairsCountingThem) {
  TempDir dir;
  // Token counts (src, tgt): (2,2) (5,1) (1,4) (3,3) and one empty pair.
  const std::string s = dir.file("x.en", "a dog\na b c d e\nhi\n\nthe red dog\n");
  const std::string t = dir.file("x.de", "ein Hund\nx\nh i j k\nz\nder rote Hund\n");
  const Tokenizer tok;
  const TokenizedCorpus text = tokenize_corpus(read_parallel(s, t), tok);
  const Vocabulary sv = Vocabulary::build(count_tokens(text, text.src), 0, 1),
                   tv = Vocabulary::build(count_tokens(text, text.tgt), 0, 1);
  const Corpus c = encode_corpus(text, sv, tv, 3);
  EXPECT_EQ(c.stats.lines, 5);
  EXPECT_EQ(c.stats.empty_skipped, 1);
  EXPECT_EQ(c.stats.too_long_skipped, 2);
  ASSERT_EQ(c.stats.examples, 2);
  EXPECT_EQ(c.examples[0].line, 1);
  EXPECT_EQ(c.examples[1].line, 5);
  EXPECT_EQ(sv.decode(to_ids(c.examples[1].src)), (std::vector<std::string>{"the", "red", "dog"}));
  EXPECT_EQ(tv.decode(to_ids(c.examples[0].tgt)), (std::vector<std::string>{"ein", "Hund"}));
  EXPECT_EQ(c.stats.src_tokens, 5);
  EXPECT_EQ(c.stats.tgt_tokens, 5);
  const std::string summary = c.stats.summary();
  EXPECT_NE(summary.find("1 empty skipped"), std::string::npos) << summary;
  EXPECT_NE(summary.find("2 too long skipped"), std::string::npos) << summary;
  // max_len <= 0 keeps everything (test sets stay aligned with their references).
  EXPECT_EQ(encode_corpus(text, sv, tv, 0).stats.examples, 4);
}

TEST(Corpus, CountsUnknownTokens) {
  TempDir dir;
  const TokenizedCorpus text =
      tokenize_corpus(read_parallel(dir.file("s", "a a b\n"), dir.file("t", "x y\n")), Tokenizer());
  const Corpus c = encode_corpus(text, Vocabulary::build({{"a"}}, 0, 1), Vocabulary::build({{"x"}}, 0, 1), 0);
  EXPECT_EQ(c.stats.src_unk, 1);
  EXPECT_EQ(c.stats.tgt_unk, 1);
}

}  // namespace
}  // namespace luong::nmt
