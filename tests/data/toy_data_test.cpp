// The toy corpus: deterministic, a reverse-and-map translation, readable by the corpus reader and the CLI.
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "models/nmt/data/corpus.h"
#include "models/nmt/data/toy_data.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(ToyData, DeterministicAndSplitsAreDistinct) {
  ToyDataOptions o;
  EXPECT_EQ(toy_pairs(o, 0, 50), toy_pairs(o, 0, 50));
  EXPECT_NE(toy_pairs(o, 0, 50), toy_pairs(o, 1, 50));
  o.seed = 2;
  EXPECT_NE(toy_pairs(o, 0, 50), toy_pairs(ToyDataOptions{}, 0, 50));
}

TEST(ToyData, TargetIsTheReversedSourceUnderOneFixedWordMapping) {
  std::map<std::string, std::string> mapping;
  std::set<std::string> targets;
  for (const auto& [src, tgt] : toy_pairs({}, 0, 500)) {
    auto s = words(src), t = words(tgt);
    ASSERT_EQ(s.size(), t.size());
    ASSERT_GE(s.size(), 4u);
    ASSERT_LE(s.size(), 9u);
    EXPECT_EQ(s.back(), ".");
    EXPECT_EQ(t.back(), ".");
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      const std::string& translated = t[s.size() - 2 - i];
      auto [it, fresh] = mapping.emplace(s[i], translated);
      EXPECT_EQ(it->second, translated) << "word " << s[i] << " translated two ways";
      targets.insert(translated);
    }
  }
  EXPECT_EQ(mapping.size(), 16u);
  EXPECT_EQ(targets.size(), 16u);  // a bijection
}

TEST(ToyData, WritesFilesThatTheCorpusReaderAccepts) {
  testing::TempDir dir;
  const auto files = write_toy_data(dir.path("toy"), {.train = 30, .valid = 5, .test = 4});
  ASSERT_EQ(files.size(), 6u);
  const ParallelText t = read_parallel(dir.path("toy/train.src"), dir.path("toy/train.tgt"));
  EXPECT_EQ(t.lines, 30);
  EXPECT_EQ(t.empty_skipped, 0);
  EXPECT_EQ(read_lines(dir.path("toy/test.tgt")).size(), 4u);
  EXPECT_EQ(t.src[0], toy_pairs({}, 0, 1)[0].first);
}

TEST(ToyData, GenDataCommandWritesTheSameCorpus) {
  testing::TempDir dir;
  const std::string cmd = std::string(LUONG_BINARY) + " gen-data --out " + dir.path("cli") +
                          " --train 20 --valid 3 --test 3 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  write_toy_data(dir.path("lib"), {.train = 20, .valid = 3, .test = 3});
  for (const char* f : {"train.src", "train.tgt", "valid.src", "test.tgt"})
    EXPECT_EQ(read_lines(dir.path(std::string("cli/") + f)), read_lines(dir.path(std::string("lib/") + f))) << f;
}

}  // namespace
}  // namespace luong::nmt
