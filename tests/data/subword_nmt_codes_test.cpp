// data.bpe_codes reads subword-nmt's codes: the pieces luong cuts with them are the pieces subword-nmt's own
// apply-bpe cuts. Skipped when python3 cannot import subword_nmt (pip install subword-nmt); a reference for
// the test, never a dependency of luong.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "models/nmt/data/bpe.h"
#include "models/nmt/data/tokenizer.h"
#include "tests/data/test_files.h"
#include "tests/support/run_luong.h"

namespace luong::nmt {
namespace {

std::string python() {
  const char* p = std::getenv("LUONG_PYTHON");
  return p && *p ? p : "python3";
}

// Text of words only (no punctuation: subword-nmt splits on spaces alone, luong's tokenizer also at
// punctuation), with a Zipf-like spread, shared stems and suffixes, and 2-byte code points.
std::string word_text(uint32_t seed, int lines) {
  const std::vector<std::string> stems = {"schwimm", "brille", "hund", "läuf", "straß", "wiese", "über", "low",
                                          "new",     "wid",    "haus", "bäck", "grün",  "kind",  "spiel"};
  const std::vector<std::string> endings = {"", "e", "en", "er", "est", "t", "ung", "chen"};
  std::mt19937 rng(seed);
  std::geometric_distribution<size_t> pick(0.15);
  std::uniform_int_distribution<int> length(1, 10);
  std::string out;
  for (int l = 0; l < lines; ++l) {
    for (int k = length(rng); k > 0; --k) {
      std::string word = stems[pick(rng) % stems.size()];
      if (pick(rng) % 3 == 0) word += stems[pick(rng) % stems.size()];  // compounds
      out += word + endings[pick(rng) % endings.size()] + (k > 1 ? " " : "");
    }
    out += "\n";
  }
  return out;
}

TEST(SubwordNmtCodes, LuongCutsWordsAsSubwordNmtsApplyBpeDoes) {
  if (testing::run_luong_shell(python() + " -c 'import subword_nmt' 2>&1").status != 0)
    GTEST_SKIP() << "python3 cannot import subword_nmt (pip install subword-nmt)";
  testing::TempDir dir;
  const std::string text = dir.file("train.txt", word_text(3, 400));
  const std::string codes = dir.path("codes.bpe"), applied = dir.path("applied.txt");
  for (const int merges : {10, 60, 300}) {
    // Their progress bars and messages go to stderr, which the failures print.
    const auto learn = testing::run_luong_shell(python() + " -m subword_nmt.learn_bpe -s " + std::to_string(merges) +
                                                " < " + text + " 2>&1 > " + codes);
    ASSERT_EQ(learn.status, 0) << learn.output;
    const auto apply = testing::run_luong_shell(python() + " -m subword_nmt.apply_bpe -c " + codes + " < " + text +
                                                " 2>&1 > " + applied);
    ASSERT_EQ(apply.status, 0) << apply.output;

    int64_t repeats = 0;
    const Bpe bpe = Bpe::read_codes(codes, repeats);
    EXPECT_GT(bpe.merges(), merges / 2) << "subword-nmt learned few merges: the test would show little";
    // subword-nmt marks a piece followed by another of its word with "@@"; luong with its joiner.
    std::ifstream words_in(text), applied_in(applied);
    std::string line, expected;
    int64_t words = 0, split = 0;
    while (std::getline(words_in, line) && std::getline(applied_in, expected)) {
      std::istringstream in(line);
      std::string cut;
      for (std::string word; in >> word;) {
        std::vector<std::string> pieces;
        bpe.segment(word, pieces);
        for (std::string& piece : pieces)
          if (piece.ends_with(kJoiner)) piece.replace(piece.size() - kJoiner.size(), kJoiner.size(), "@@");
        for (const std::string& piece : pieces) cut += (cut.empty() ? "" : " ") + piece;
        ++words, split += pieces.size() > 1;
      }
      ASSERT_EQ(cut, expected) << merges << " merges, line: " << line;
    }
    EXPECT_TRUE(words_in.eof() || !std::getline(words_in, line)) << "apply-bpe wrote fewer lines";
    EXPECT_GT(split, 0) << merges << " merges split no word";
    EXPECT_GT(words, 1000);
  }
}

}  // namespace
}  // namespace luong::nmt
