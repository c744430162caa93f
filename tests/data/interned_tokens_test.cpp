// The tokenized corpus as numbers of one token table: the same tokens, counts and ids as the strings they stand
// for, at 4 bytes a token.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "models/nmt/data/bpe.h"
#include "models/nmt/data/corpus.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

TEST(TokenTable, NumbersEachDistinctStringOnceInTheOrderFirstSeen) {
  TokenTable table;
  EXPECT_EQ(table.intern("der"), 0);
  EXPECT_EQ(table.intern("Hund"), 1);
  EXPECT_EQ(table.intern("der"), 0);
  EXPECT_EQ(table.intern(""), 2);
  EXPECT_EQ(table.intern("Hund\xEF\xBF\xAD"), 3);  // with a joiner: another token
  ASSERT_EQ(table.size(), 4);
  // The texts stay where they are while the table grows past many rehashes.
  const std::string& first = table.text(0);
  for (int i = 0; i < 10000; ++i) table.intern("w" + std::to_string(i));
  EXPECT_EQ(&table.text(0), &first);
  EXPECT_EQ(table.text(0), "der");
  EXPECT_EQ(table.text(3), "Hund\xEF\xBF\xAD");
  EXPECT_EQ(table.text(4 + 9999), "w9999");
}

TEST(TokenizedSide, SentencesAreContiguousSlicesOfOneArray) {
  TokenizedSide side;
  for (int32_t t : {5, 6, 7}) side.push_token(t);
  side.end_sentence();
  side.end_sentence();  // an empty sentence is a slice of length 0
  side.push_token(5);
  side.end_sentence();
  ASSERT_EQ(side.size(), 3u);
  EXPECT_EQ(side.tokens(), 4);
  EXPECT_EQ(std::vector<int32_t>(side[0].begin(), side[0].end()), (std::vector<int32_t>{5, 6, 7}));
  EXPECT_TRUE(side[1].empty());
  EXPECT_EQ(std::vector<int32_t>(side[2].begin(), side[2].end()), (std::vector<int32_t>{5}));
}

// A random text with a Zipf-like word distribution, repeated words, punctuation and umlauts.
ParallelText random_text(uint32_t seed, size_t pairs) {
  std::mt19937 rng(seed);
  const std::vector<std::string> words = {"der",    "Hund",  "läuft",         "über", "die", "Wiese",
                                          ",",      ".",     "Schwimmbrille", "a",    "dog", "runs",
                                          "across", "grass", "l'homme",       "(",    ")",   "Straße"};
  std::geometric_distribution<size_t> pick(0.2);
  std::uniform_int_distribution<int> length(1, 12);
  ParallelText text;
  for (size_t i = 0; i < pairs; ++i) {
    for (auto* side : {&text.src, &text.tgt}) {
      std::string line;
      for (int k = length(rng); k > 0; --k) line += (line.empty() ? "" : " ") + words[pick(rng) % words.size()];
      side->push_back(line);
    }
    text.line_numbers.push_back(static_cast<int64_t>(i) + 1);
  }
  text.lines = static_cast<int64_t>(pairs);
  return text;
}

TEST(TokenizedCorpus, HoldsWhatTheTokenizerGivesLineByLineWithAndWithoutSubwords) {
  const ParallelText text = random_text(7, 300);
  Tokenizer words;
  TokenizedCorpus c = tokenize_corpus(text, words);
  ASSERT_EQ(c.src.size(), 300u);
  ASSERT_EQ(c.tgt.size(), 300u);
  std::vector<std::vector<std::string>> src_words, tgt_words;
  for (size_t i = 0; i < 300; ++i) {
    src_words.push_back(words.tokenize(text.src[i]));
    tgt_words.push_back(words.tokenize(text.tgt[i]));
    ASSERT_EQ(c.strings(c.src, i), src_words.back()) << "line " << i + 1;
    ASSERT_EQ(c.strings(c.tgt, i), tgt_words.back()) << "line " << i + 1;
  }
  // Counts of the strings, counted the plain way.
  std::map<std::string, int64_t> expected;
  for (const auto& sentence : src_words)
    for (const auto& token : sentence) ++expected[token];
  const auto counts = count_tokens(c, c.src);
  const std::map<std::string, int64_t> sorted(counts.begin(), counts.end());
  EXPECT_EQ(sorted, expected);

  // Learning on the table's counts gives the merges of learning on the strings, and the split text is what a
  // tokenizer with those merges gives line by line.
  const auto bpe = learn_subwords(c, 30);
  ASSERT_TRUE(bpe);
  EXPECT_EQ(bpe->to_list(), Bpe::learn({&src_words, &tgt_words}, 30).to_list());
  const Tokenizer subwords({}, bpe);
  for (size_t i = 0; i < 300; ++i) {
    ASSERT_EQ(c.strings(c.src, i), subwords.tokenize(text.src[i])) << "line " << i + 1;
    ASSERT_EQ(c.strings(c.tgt, i), subwords.tokenize(text.tgt[i])) << "line " << i + 1;
  }
  // The split words stay in the table, but nothing counts them any more.
  const auto split_counts = count_tokens(c, {&c.src, &c.tgt});
  int64_t total = 0, split_words = 0;
  for (const auto& [token, n] : split_counts) total += n;
  EXPECT_EQ(total, c.src.tokens() + c.tgt.tokens());
  for (const auto& sentence : src_words)
    for (const auto& word : sentence) {
      std::vector<std::string> pieces;
      bpe->segment(word, pieces);
      if (pieces.size() < 2) continue;
      ++split_words;
      EXPECT_EQ(split_counts.count(word), 0u) << word;
    }
  EXPECT_GT(split_words, 0) << "30 merges split no word: the test shows nothing";
}

TEST(TokenizedCorpus, EncodingMapsEachTokenThroughItsSidesVocabulary) {
  const ParallelText text = random_text(11, 200);
  const TokenizedCorpus c = tokenize_corpus(text, Tokenizer());
  // Small vocabularies, different per side, so <unk> and side-specific ids both occur.
  const Vocabulary sv = Vocabulary::build(count_tokens(c, c.src), 10, 1);
  const Vocabulary tv = Vocabulary::build(count_tokens(c, c.tgt), 14, 1);
  const Corpus corpus = encode_corpus(c, sv, tv, 0);
  ASSERT_EQ(corpus.examples.size(), 200u);
  int64_t unk = 0;
  for (size_t i = 0; i < 200; ++i) {
    EXPECT_EQ(to_ids(corpus.examples[i].src), sv.encode(c.strings(c.src, i))) << "line " << i + 1;
    EXPECT_EQ(to_ids(corpus.examples[i].tgt), tv.encode(c.strings(c.tgt, i))) << "line " << i + 1;
    for (int64_t id : corpus.examples[i].src) unk += id == Vocabulary::kUnk;
  }
  EXPECT_GT(unk, 0);
  EXPECT_EQ(corpus.stats.src_unk, unk);
}

// The training path reads its files line by line; whatever the files hold, it must give the corpus, or the
// error message, of reading them whole.
TEST(TokenizedCorpus, ReadingFilesLineByLineGivesWhatReadingThemWholeGives) {
  testing::TempDir dir;
  const std::string big_line(200000, 'x');  // longer than LineStream's 64 KiB reads
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"a dog\nthe red dog\n", "ein Hund\nder rote Hund\n"},
      {"\xEF\xBB\xBF"
       "a dog\r\nno newline",
       "ein Hund\r\nkein Zeilenende"},         // BOM, CRLF, last line open
      {"a\n \n\nb\nc\n", "x\ny\nz\n\t\nw\n"},  // blank pairs skipped, counted
      {"", ""},
      {"a\n" + big_line + " b\nc\n", "x\ny " + big_line + "\nz\n"},
      {"a\nb\nc\n", "x\ny\n"},  // line counts differ: src longer
      {"a\n", "x\ny\nz\n"},     // tgt longer
      {"", "x\n"},
      {"gut\nGr\xC3\xBC\xC3\x9F"
       "e\nschl\xE4gt\n",
       "a\nb\nc\n"},                   // Latin-1 byte on line 3
      {"a\nb\n", "x\ny\0z\n"},         // NUL byte
      {"a\rb\rc\r", "x\ny\nz\n"},      // CR-only line ends
      {"a\nb\n", "x\ny\nbad \xFF\n"},  // the longer file's extra line is checked too
  };
  int cases = 0;
  for (const auto& [src_text, tgt_text] : inputs) {
    const std::string src = dir.file("case" + std::to_string(cases) + ".src", src_text);
    const std::string tgt = dir.file("case" + std::to_string(cases) + ".tgt", tgt_text);
    ++cases;
    std::string whole_error, stream_error;
    TokenizedCorpus whole, streamed;
    try {
      whole = tokenize_corpus(read_parallel(src, tgt), Tokenizer());
    } catch (const Error& e) {
      whole_error = e.what();
    }
    try {
      streamed = tokenize_files(src, tgt, Tokenizer());
    } catch (const Error& e) {
      stream_error = e.what();
    }
    EXPECT_EQ(stream_error, whole_error) << "case " << cases;
    if (!whole_error.empty()) continue;
    EXPECT_EQ(streamed.lines, whole.lines) << "case " << cases;
    EXPECT_EQ(streamed.empty_skipped, whole.empty_skipped) << "case " << cases;
    EXPECT_EQ(streamed.line_numbers, whole.line_numbers) << "case " << cases;
    ASSERT_EQ(streamed.src.size(), whole.src.size()) << "case " << cases;
    for (size_t i = 0; i < whole.src.size(); ++i) {
      EXPECT_EQ(streamed.strings(streamed.src, i), whole.strings(whole.src, i)) << "case " << cases;
      EXPECT_EQ(streamed.strings(streamed.tgt, i), whole.strings(whole.tgt, i)) << "case " << cases;
    }
  }
  EXPECT_ERROR_HAS(tokenize_files(dir.path("none.src"), dir.path("none.tgt"), Tokenizer()),
                   "none.src' cannot be read: No such file or directory");
  EXPECT_ERROR_HAS(tokenize_files(dir.path(""), dir.path(""), Tokenizer()), "cannot be read: it is a directory");
}

}  // namespace
}  // namespace luong::nmt
