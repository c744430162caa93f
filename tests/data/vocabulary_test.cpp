// Vocabulary: specials, frequency order with deterministic ties, min_freq, max size, file and list forms.
#include <algorithm>

#include <gtest/gtest.h>

#include "models/nmt/data/vocabulary.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using Toks = std::vector<std::string>;

std::vector<std::vector<std::string>> sample() {
  // counts: der 4, Hund 3, bellt 2, die 2, Katze 1, schläft 1
  return {{"der", "Hund", "bellt"}, {"der", "Hund", "bellt"}, {"der", "Hund"}, {"der", "die", "die"},
          {"Katze", "schläft"}};
}

TEST(Vocabulary, SpecialsComeFirstThenFrequencyOrderWithTiesByString) {
  const Vocabulary v = Vocabulary::build(sample(), 0, 1);
  EXPECT_EQ(v.to_tokens(),
            (Toks{"<pad>", "<unk>", "<s>", "</s>", "der", "Hund", "bellt", "die", "Katze", "schläft"}));
  EXPECT_EQ(v.id("<pad>"), Vocabulary::kPad);
  EXPECT_EQ(v.id("<unk>"), Vocabulary::kUnk);
  EXPECT_EQ(v.id("<s>"), Vocabulary::kBos);
  EXPECT_EQ(v.id("</s>"), Vocabulary::kEos);
  EXPECT_EQ(v.count(v.id("der")), 4);
  EXPECT_EQ(v.count(v.id("die")), 2);
  EXPECT_EQ(v.count(Vocabulary::kPad), 0);
}

TEST(Vocabulary, MinFreqAndMaxSize) {
  EXPECT_EQ(Vocabulary::build(sample(), 0, 2).to_tokens(),
            (Toks{"<pad>", "<unk>", "<s>", "</s>", "der", "Hund", "bellt", "die"}));
  // max size counts the specials; the tie bellt/die (2 each) is broken by byte order.
  EXPECT_EQ(Vocabulary::build(sample(), 7, 1).to_tokens(), (Toks{"<pad>", "<unk>", "<s>", "</s>", "der", "Hund", "bellt"}));
  EXPECT_EQ(Vocabulary::build(sample(), 5, 1).size(), 5);
  EXPECT_ERROR_HAS(Vocabulary::build(sample(), 4, 1), "max size 4");
}

TEST(Vocabulary, SameCountsGiveSameIdsWhateverTheInputOrder) {
  auto s = sample();
  std::reverse(s.begin(), s.end());
  for (auto& sent : s) std::reverse(sent.begin(), sent.end());
  EXPECT_EQ(Vocabulary::build(s, 0, 1), Vocabulary::build(sample(), 0, 1));
}

TEST(Vocabulary, SpecialStringsInDataAreNotDuplicated) {
  const Vocabulary v = Vocabulary::build({{"<unk>", "<s>", "a"}}, 0, 1);
  EXPECT_EQ(v.to_tokens(), (Toks{"<pad>", "<unk>", "<s>", "</s>", "a"}));
}

TEST(Vocabulary, EncodeMapsUnknownsAndDecodeStopsAtEos) {
  const Vocabulary v = Vocabulary::build(sample(), 0, 1);
  EXPECT_EQ(v.encode({"der", "Vogel", "bellt"}), (std::vector<int64_t>{4, Vocabulary::kUnk, 6}));
  EXPECT_EQ(v.decode({Vocabulary::kBos, 4, 1, 5, Vocabulary::kEos, 6}), (Toks{"der", "<unk>", "Hund"}));
  EXPECT_EQ(v.decode({4, Vocabulary::kPad, 5}), (Toks{"der", "Hund"}));
  EXPECT_ERROR_HAS(v.token(99), "id 99 out of range");
}

TEST(Vocabulary, SavesAndLoadsTextFileWithCounts) {
  testing::TempDir dir;
  const Vocabulary v = Vocabulary::build(sample(), 0, 1);
  const std::string path = dir.path("vocab.de");
  v.save(path);
  std::ifstream in(path);
  std::string first, fifth;
  std::getline(in, first);
  for (int i = 0; i < 4; ++i) std::getline(in, fifth);
  EXPECT_EQ(first, "<pad>\t0");
  EXPECT_EQ(fifth, "der\t4");
  const Vocabulary back = Vocabulary::load(path);
  EXPECT_EQ(back, v);
  EXPECT_EQ(back.count(back.id("Hund")), 3);
}

TEST(Vocabulary, ListFormForCheckpoints) {
  const Vocabulary v = Vocabulary::build(sample(), 0, 1);
  const Vocabulary back = Vocabulary::from_tokens(v.to_tokens());
  EXPECT_EQ(back, v);
  EXPECT_EQ(back.id("Katze"), v.id("Katze"));
  EXPECT_ERROR_HAS(Vocabulary::from_tokens({"a", "b"}), "must start with <pad> <unk> <s> </s>");
  EXPECT_ERROR_HAS(Vocabulary::from_tokens({"<pad>", "<unk>", "<s>", "</s>", "a", "a"}), "duplicate token 'a'");
  // A token that is not UTF-8 (an edited checkpoint's vocabulary) would be written out as raw bytes.
  EXPECT_ERROR_HAS(Vocabulary::from_tokens({"<pad>", "<unk>", "<s>", "</s>", "a", "b\xFF"}),
                   "vocabulary: token 5 is not valid UTF-8 (byte 1 of the token)");
}

TEST(Vocabulary, LoadErrorsNameFileAndLine) {
  testing::TempDir dir;
  EXPECT_ERROR_HAS(Vocabulary::load(dir.path("missing")), "missing' cannot be read");
  const std::string bad = dir.file("bad", "<pad>\t0\n<unk>\t0\n<s>\t0\n</s>\t0\nHund\tviele\n");
  EXPECT_ERROR_HAS(Vocabulary::load(bad), "bad' line 5", "token<TAB>count");
  const std::string nospecial = dir.file("nospecial", "Hund\t3\n");
  EXPECT_ERROR_HAS(Vocabulary::load(nospecial), "nospecial'", "<pad> <unk> <s> </s>");
}

}  // namespace
}  // namespace luong::nmt
