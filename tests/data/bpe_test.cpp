// Byte-pair encoding: the merges learned on Sennrich et al.'s example worked by hand, the incremental learner
// against a from-scratch recount on random text, segmentation that reproduces learning's, and the tokenizer
// round trip through subword pieces.
#include "models/nmt/data/bpe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "framework/core/error.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/utf8.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using Toks = std::vector<std::string>;
using Text = std::vector<Toks>;
const std::string J(kJoiner);

// low x5, lower x2, newest x6, widest x3: the word counts of Sennrich et al. (2016), section 3.2.
Text sennrich_text() {
  Text t;
  for (const auto& [w, n] :
       std::vector<std::pair<std::string, int>>{{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}})
    for (int i = 0; i < n; ++i) t.push_back({w});
  return t;
}

// Worked by hand: each merge is the most frequent pair, ties to the bytewise smaller (left, right).
const Toks kSennrichMerges = {
    "e s",          // 9 (newest 6, widest 3); ties with s t</w> (9), and e < s
    "es t</w>",     // 9
    "l o",          // 7
    "e w",          // 6: ties with n e and w est</w>
    "ew est</w>",   // 6: ties with n ew
    "n ewest</w>",  // 6
    "lo w</w>",     // 5
    "d est</w>",    // 3: ties with i d and w i
    "i dest</w>",   // 3
    "w idest</w>",  // 3
    "e r</w>",      // 2: ties with lo w and w e
    "lo w",         // 2
    "low er</w>",   // 2; then every pair occurs once and learning stops
};

TEST(Bpe, LearnsTheMostFrequentPairFirstAndStopsWhenNoPairOccursTwice) {
  const Text t = sennrich_text();
  EXPECT_EQ(Bpe::learn({&t}, 100).to_list(), kSennrichMerges);
  EXPECT_EQ(Bpe::learn({&t}, 4).to_list(), Toks(kSennrichMerges.begin(), kSennrichMerges.begin() + 4));
  EXPECT_EQ(Bpe::learn({&t}, 0).merges(), 0);
  // Two texts count together (a joint encoding): the same words split over two texts learn the same merges.
  const Text a(t.begin(), t.begin() + 7), b(t.begin() + 7, t.end());
  EXPECT_EQ(Bpe::learn({&a, &b}, 100).to_list(), kSennrichMerges);
}

TEST(Bpe, SegmentsByApplyingTheMergesInTheOrderLearned) {
  const Bpe bpe = Bpe::from_list(kSennrichMerges);
  auto seg = [&](const std::string& w) {
    Toks out;
    bpe.segment(w, out);
    return out;
  };
  EXPECT_EQ(seg("newest"), Toks{"newest"});
  EXPECT_EQ(seg("lower"), Toks{"lower"});
  // e s, es t</w>, l o, then lo w (rank 11): "low" + "est", the joiner on the first piece.
  EXPECT_EQ(seg("lowest"), (Toks{"low" + J, "est"}));
  EXPECT_EQ(seg("lox"), (Toks{"lo" + J, "x"}));  // a code point never seen stays a piece of its own
  EXPECT_EQ(seg("x"), Toks{"x"});
  EXPECT_EQ(seg("wöe"), (Toks{"w" + J, "ö" + J, "e"}));  // cut at code points, never inside one
  // Punctuation and pieces with a joiner are not words: kept whole.
  for (const std::string& t : {J + ",", std::string("..."), "(" + J, J + "-" + J}) EXPECT_EQ(seg(t), Toks{t}) << t;
  EXPECT_FALSE(is_bpe_word(J + "s"));
  // Longer than kMaxWordLength code points: kept whole (splitting it would cost its length squared).
  std::string long_word;
  for (size_t i = 0; i < kMaxWordLength; ++i) long_word += "ö";
  EXPECT_EQ(seg(long_word).size(), kMaxWordLength);
  EXPECT_EQ(seg(long_word + "e"), Toks{long_word + "e"});
  EXPECT_TRUE(is_bpe_word("Straße"));
}

TEST(Bpe, TheWholeWordOfAPieceJoinsThePiecesOfItsWord) {
  // "(Schwimmbrille) lowest" as pieces: unk replacement copies the word, never half of it.
  const Toks t = {"(" + J, "Schwimm" + J, "bril" + J, "le", J + ")", "low" + J, "est", "x", J + ","};
  for (size_t i : {1, 2, 3}) EXPECT_EQ(whole_word_at(t, i), "Schwimmbrille") << i;
  EXPECT_EQ(whole_word_at(t, 0), "(" + J);
  EXPECT_EQ(whole_word_at(t, 4), J + ")");
  EXPECT_EQ(whole_word_at(t, 5), "lowest");
  EXPECT_EQ(whole_word_at(t, 6), "lowest");
  EXPECT_EQ(whole_word_at(t, 7), "x");
  EXPECT_EQ(whole_word_at(t, 8), J + ",");
  EXPECT_EQ(whole_word_at({"l", J + "'" + J, "homme"}, 0), "l");  // word tokens without BPE stay themselves
  EXPECT_EQ(whole_word_at({"a" + J, "b" + J}, 0), "ab");          // a word cut short at the end of the output
}

TEST(Bpe, TheMergeListRoundTripsAndAMalformedOneIsAnErrorNamingTheItem) {
  EXPECT_EQ(Bpe::from_list(kSennrichMerges).to_list(), kSennrichMerges);
  EXPECT_EQ(Bpe::from_list({}).merges(), 0);
  const std::vector<std::pair<Toks, std::string>> bad = {
      {{"e s", "es"}, "bpe merge 2: 'es': expected two symbols separated by one space"},
      {{"a b c"}, "bpe merge 1: 'a b c'"},
      {{" a"}, "bpe merge 1: ' a'"},
      {{"a "}, "bpe merge 1: 'a '"},
      {{"e s", "e s"}, "bpe merge 2: 'e s' repeats an earlier merge"},
      {{"e</w> s"}, "its left symbol ends with </w>"},
  };
  for (const auto& [list, message] : bad) {
    try {
      Bpe::from_list(list);
      ADD_FAILURE() << "accepted " << list.back();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// data.bpe_codes: a run's bpe.merges.txt, or subword-nmt's learn-bpe codes (version 0.2 header; pairs repeat there).
TEST(Bpe, CodesFilesReadAsTheListTheySpellAndTheirErrorsNameFileAndLine) {
  testing::TempDir dir;
  std::string plain;
  for (const std::string& m : kSennrichMerges) plain += m + "\n";
  int64_t repeats = -1;
  EXPECT_EQ(Bpe::read_codes(dir.file("merges.txt", plain), repeats).to_list(), kSennrichMerges);
  EXPECT_EQ(repeats, 0);
  // subword-nmt: a "#version: 0.2" first line, CRLF line ends here, and a pair repeated (the first applies).
  std::string codes = "#version: 0.2\r\n";
  for (size_t i = 0; i < kSennrichMerges.size(); ++i)
    codes += kSennrichMerges[i] + "\r\n" + (i == 5 ? kSennrichMerges[2] + "\r\n" : "");
  const Bpe read = Bpe::read_codes(dir.file("codes.bpe", codes), repeats);
  EXPECT_EQ(read.to_list(), kSennrichMerges);
  EXPECT_EQ(repeats, 1);
  std::vector<std::string> pieces;
  read.segment("lowest", pieces);
  EXPECT_EQ(pieces, (Toks{"low" + J, "est"}));

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"e s\nes t</w>\nlo\n", "codes' line 3: 'lo': expected two symbols separated by one space"},
      {"#version: 0.2\ne s\n\nl o\n", "codes' line 3: '': expected two symbols"},
      {"e</w> s\n", "codes' line 1: 'e</w> s': its left symbol ends with </w>"},
      {"#version: 0.1\ne s\n", "codes' line 1: '#version: 0.1': only version 0.2 codes of subword-nmt are read"},
      {"#version: 0.2\n", "codes' holds no BPE merges"},
      {"", "codes' holds no BPE merges"},
      {"e s\nl\xE9 o\n", "codes' line 2: invalid UTF-8 at byte 1"},
  };
  for (const auto& [text, message] : bad) {
    try {
      Bpe::read_codes(dir.file("codes", text), repeats);
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  EXPECT_ERROR_HAS(Bpe::read_codes(dir.path("none"), repeats), "none' cannot be read");
}

// The definition, computed the slow way: recount every pair of every word type before each merge.
struct NaiveBpe {
  Toks merges;
  std::map<std::string, Toks> final_symbols;  // each word type's symbols after the last merge
};
NaiveBpe naive_learn(const Text& text, int64_t max_merges) {
  std::map<std::string, int64_t> counts;
  for (const auto& s : text)
    for (const auto& w : s) ++counts[w];
  std::map<std::string, Toks> words;
  for (const auto& [w, n] : counts) {
    Toks syms;
    for (const char32_t cp : utf8_decode(w)) {
      syms.emplace_back();
      utf8_append(syms.back(), cp);
    }
    syms.back() += "</w>";
    words[w] = syms;
  }
  NaiveBpe out;
  while (static_cast<int64_t>(out.merges.size()) < max_merges) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;  // ordered: the first of the highest wins ties
    for (const auto& [w, syms] : words)
      for (size_t i = 0; i + 1 < syms.size(); ++i) pairs[{syms[i], syms[i + 1]}] += counts[w];
    std::pair<std::string, std::string> best;
    int64_t best_count = 1;
    for (const auto& [p, c] : pairs)
      if (c > best_count) best = p, best_count = c;
    if (best_count < 2) break;
    out.merges.push_back(best.first + " " + best.second);
    for (auto& [w, syms] : words) {
      Toks merged;
      for (size_t i = 0; i < syms.size(); ++i) {
        if (i + 1 < syms.size() && syms[i] == best.first && syms[i + 1] == best.second) {
          merged.push_back(syms[i] + syms[i + 1]);
          ++i;
        } else {
          merged.push_back(syms[i]);
        }
      }
      syms = merged;
    }
  }
  out.final_symbols = words;
  return out;
}

TEST(Bpe, TheIncrementalLearnerMatchesARecountOfEveryPairAndSegmentingReproducesLearning) {
  // Words over a small alphabet with repeats ("aaaa" merges overlap) and two-byte code points.
  const Toks letters = {"a", "b", "c", "ä", "ß"};
  for (const uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> letter(0, letters.size() - 1), len(1, 7);
    std::geometric_distribution<int> repeats(0.3);
    Text text;
    for (int s = 0; s < 60; ++s) {
      Toks sentence;
      const std::string w = [&] {
        std::string out;
        for (size_t n = len(rng); n > 0; --n) out += letters[letter(rng)];
        return out;
      }();
      for (int r = repeats(rng); r >= 0; --r) sentence.push_back(w);
      text.push_back(sentence);
    }
    const NaiveBpe want = naive_learn(text, 200);
    const Bpe got = Bpe::learn({&text}, 200);
    ASSERT_EQ(got.to_list(), want.merges) << "seed " << seed;
    for (const auto& [word, syms] : want.final_symbols) {
      Toks pieces;
      got.segment(word, pieces);
      Toks expected = syms;
      expected.back().resize(expected.back().size() - 4);  // "</w>"
      for (size_t i = 0; i + 1 < expected.size(); ++i) expected[i] += J;
      EXPECT_EQ(pieces, expected) << word;
    }
  }
}

TEST(Bpe, TheTokenizerSplitsWordsIntoPiecesThatDetokeniseBackToTheText) {
  const Text t = sennrich_text();
  const Tokenizer tok({}, std::make_shared<const Bpe>(Bpe::learn({&t}, 100)));
  EXPECT_EQ(tok.tokenize("lowest, newest!"), (Toks{"low" + J, "est", J + ",", "newest", J + "!"}));
  for (const std::string s : {"lowest, newest!", "Die „widest“ Straße (lower-west) ist 3.5 km lang.", "x y z"})
    EXPECT_EQ(tok.detokenize(tok.tokenize(s)), s);
  // The corpus path (with its cache of segmented words) gives what tokenize gives line by line.
  ParallelText text;
  text.src = {"lowest, newest!", "lower lowest"};
  text.tgt = {"widest lox", "newest."};
  text.lines = 2;
  text.line_numbers = {1, 2};
  const TokenizedCorpus c = tokenize_corpus(text, tok);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(c.strings(c.src, i), tok.tokenize(text.src[i]));
    EXPECT_EQ(c.strings(c.tgt, i), tok.tokenize(text.tgt[i]));
  }
}

}  // namespace
}  // namespace luong::nmt
