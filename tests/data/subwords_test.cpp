// Subword units per side (data.bpe_joint: false, data.bpe_codes_tgt): each side's merges come from its own
// words and split only that side; the checkpoint form of joint and per-side merges, and reading it back.
#include "models/nmt/data/subwords.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "framework/core/error.h"
#include "framework/io/checkpoint.h"
#include "models/nmt/data/bpe.h"
#include "models/nmt/data/corpus.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using testing::TempDir;

SubwordSettings learned(int64_t merges, bool joint) {
  SubwordSettings s;
  s.merges = merges;
  s.joint = joint;
  return s;
}

SubwordSettings from_files(const std::string& codes, const std::string& codes_tgt = "") {
  SubwordSettings s;
  s.codes = codes;
  s.codes_tgt = codes_tgt;
  return s;
}

// Latin words on the source side, Cyrillic ones on the target side: sides that share no symbol, where joint
// merges split each side with pairs learned partly on the other.
ParallelText two_scripts() {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"the dog runs", "собака бежит"},
      {"the cat runs", "кошка бежит"},
      {"a dog sleeps", "собака спит"},
      {"the dog and the cat", "собака и кошка"},
      {"a cat sleeps .", "кошка спит ."},
      {"dogs run , cats sleep", "собаки бегут , кошки спят"},
      {"the other dog sleeps", "другая собака спит"},
      {"running dogs", "бегущие собаки"},
  };
  ParallelText text;
  for (const auto& [s, t] : pairs) {
    text.src.push_back(s);
    text.tgt.push_back(t);
    text.line_numbers.push_back(static_cast<int64_t>(text.src.size()));
  }
  text.lines = static_cast<int64_t>(pairs.size());
  return text;
}

std::vector<std::string> side_strings(const TokenizedCorpus& c, const TokenizedSide& side, size_t i) {
  return c.strings(side, i);
}

TEST(Subwords, PerSideMergesAreLearnedOnEachSidesWordsAndSplitOnlyThatSide) {
  const ParallelText text = two_scripts();
  TokenizedCorpus words = tokenize_corpus(text, Tokenizer());
  const auto src_counts = count_tokens(words, words.src), tgt_counts = count_tokens(words, words.tgt);

  TokenizedCorpus split = words;
  std::string log;
  const Subwords per_side = run_subwords(split, learned(15, false), log);
  ASSERT_TRUE(per_side.src && per_side.tgt);
  EXPECT_FALSE(per_side.is_joint());
  // The same learner, fed one side's counts.
  EXPECT_EQ(per_side.src->to_list(), Bpe::learn_from_counts(src_counts, 15).to_list());
  EXPECT_EQ(per_side.tgt->to_list(), Bpe::learn_from_counts(tgt_counts, 15).to_list());
  EXPECT_EQ(log, "bpe per side: source 15 merges, target 15 merges");
  // No source merge holds a Cyrillic letter and no target merge a Latin one.
  for (const std::string& m : per_side.src->to_list()) EXPECT_EQ(m.find("\xD0"), std::string::npos) << m;
  for (std::string m : per_side.tgt->to_list()) {
    if (m.ends_with(Bpe::kEndOfWord)) m.resize(m.size() - Bpe::kEndOfWord.size());
    EXPECT_FALSE(std::any_of(m.begin(), m.end(), [](char c) { return c >= 'a' && c <= 'z'; })) << m;
  }

  // Each side is what a tokenizer with that side's merges gives line by line.
  const Tokenizer src_tok({}, per_side.src), tgt_tok({}, per_side.tgt);
  for (size_t i = 0; i < text.src.size(); ++i) {
    EXPECT_EQ(side_strings(split, split.src, i), src_tok.tokenize(text.src[i])) << "line " << i + 1;
    EXPECT_EQ(side_strings(split, split.tgt, i), tgt_tok.tokenize(text.tgt[i])) << "line " << i + 1;
  }
  // Reading the files through the same units gives the same corpus (validation and eval read that way).
  TempDir dir;
  std::string src_lines, tgt_lines;
  for (size_t i = 0; i < text.src.size(); ++i) src_lines += text.src[i] + "\n", tgt_lines += text.tgt[i] + "\n";
  const TokenizedCorpus read =
      tokenize_files(dir.file("s", src_lines), dir.file("t", tgt_lines), TokenizerOptions{}, per_side);
  for (size_t i = 0; i < text.src.size(); ++i) {
    EXPECT_EQ(side_strings(read, read.src, i), side_strings(split, split.src, i));
    EXPECT_EQ(side_strings(read, read.tgt, i), side_strings(split, split.tgt, i));
  }

  // Joint merges of the same number are learned on both sides' counts: other lists.
  TokenizedCorpus joint_split = words;
  const Subwords joint = run_subwords(joint_split, learned(15, true), log);
  EXPECT_TRUE(joint.is_joint());
  EXPECT_EQ(log, "bpe: 15 merges");
  EXPECT_NE(joint.src->to_list(), per_side.src->to_list());
  EXPECT_NE(joint.src->to_list(), per_side.tgt->to_list());
}

TEST(Subwords, PerSideMergesFromTwoFilesSplitEachSideByItsOwn) {
  TempDir dir;
  // "d o" merged on the source side only, "с о" on the target side only.
  const std::string src_codes = dir.file("src.codes", "#version: 0.2\nd o\ndo g</w>\n");
  const std::string tgt_codes = dir.file("tgt.codes", "с о\nсо б\n");
  TokenizedCorpus c = tokenize_corpus(two_scripts(), Tokenizer());
  std::string log;
  const Subwords s = run_subwords(c, from_files(src_codes, tgt_codes), log);
  EXPECT_EQ(log, "bpe per side: source 2 merges from " + src_codes + ", target 2 merges from " + tgt_codes);
  // "dog" is one piece by the source's merges; "the" is cut into letters (no merge applies).
  const std::vector<std::string> first_src = side_strings(c, c.src, 0);
  EXPECT_NE(std::find(first_src.begin(), first_src.end(), "dog"), first_src.end());
  const std::vector<std::string> first_tgt = side_strings(c, c.tgt, 0);
  ASSERT_FALSE(first_tgt.empty());
  EXPECT_EQ(first_tgt[0], "соб" + std::string(kJoiner)) << "the target's merges apply to the target";
  // One file alone is a joint encoding.
  TokenizedCorpus joint = tokenize_corpus(two_scripts(), Tokenizer());
  const Subwords one = run_subwords(joint, from_files(src_codes), log);
  EXPECT_TRUE(one.is_joint());
  EXPECT_EQ(side_strings(joint, joint.tgt, 0)[0], "с" + std::string(kJoiner)) << "source merges left Cyrillic whole";
}

TEST(Subwords, JointMergesKeepTheirCheckpointKeyAndPerSideOnesGetTwo) {
  const auto a = std::make_shared<const Bpe>(Bpe::from_list({"a b", "ab c</w>"}));
  const auto b = std::make_shared<const Bpe>(Bpe::from_list({"x y"}));
  std::map<std::string, std::string> joint, apart, none;
  Subwords::joint(a).save(joint);
  Subwords{a, b}.save(apart);
  Subwords{}.save(none);
  EXPECT_EQ(joint.size(), 1u);
  EXPECT_EQ(split_string_list(joint.at("bpe/merges")), a->to_list());
  EXPECT_EQ(apart.size(), 2u);
  EXPECT_EQ(split_string_list(apart.at("bpe/merges_src")), a->to_list());
  EXPECT_EQ(split_string_list(apart.at("bpe/merges_tgt")), b->to_list());
  EXPECT_TRUE(none.empty());

  const Subwords j = Subwords::load(joint, "j.h5"), p = Subwords::load(apart, "p.h5"), n = Subwords::load(none, "n");
  EXPECT_TRUE(j.is_joint());
  EXPECT_EQ(j.src->to_list(), a->to_list());
  EXPECT_FALSE(p.is_joint());
  EXPECT_EQ(p.src->to_list(), a->to_list());
  EXPECT_EQ(p.tgt->to_list(), b->to_list());
  EXPECT_FALSE(n.any());
  EXPECT_EQ(j.describe(), "2 BPE merges");
  EXPECT_EQ(p.describe(), "2 source BPE merges and 1 target BPE merges");
  EXPECT_EQ(n.describe(), "whole words");

  EXPECT_TRUE(same_subwords(j, Subwords::joint(a)));
  EXPECT_FALSE(same_subwords(j, p));
  EXPECT_TRUE(same_subwords(j, Subwords{a, std::make_shared<const Bpe>(*a)})) << "the same split on each side";

  std::map<std::string, std::string> both = joint;
  both.insert(apart.begin(), apart.end());
  EXPECT_ERROR_HAS(Subwords::load(both, "x.h5"), "checkpoint x.h5 holds both joint BPE merges");
  std::map<std::string, std::string> damaged = apart;
  damaged["bpe/merges_tgt"] = "x y";  // a list ends with a newline
  EXPECT_ERROR_HAS(Subwords::load(damaged, "d.h5"), "checkpoint d.h5: 'bpe/merges_tgt'");
}

}  // namespace
}  // namespace luong::nmt
