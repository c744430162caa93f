// "Did you mean": the edit distance behind it and when a name counts as a typo of another.
#include "framework/core/suggest.h"

#include <gtest/gtest.h>

namespace luong {
namespace {

TEST(TypoDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(typo_distance("", ""), 0u);
  EXPECT_EQ(typo_distance("abc", ""), 3u);
  EXPECT_EQ(typo_distance("", "abc"), 3u);
  EXPECT_EQ(typo_distance("chekpoint", "checkpoint"), 1u);  // a missing letter
  EXPECT_EQ(typo_distance("max_stepss", "max_steps"), 1u);  // one too many
  EXPECT_EQ(typo_distance("genaral", "general"), 1u);       // one wrong
  EXPECT_EQ(typo_distance("trian", "train"), 1u);           // two swapped: one edit, not two
  EXPECT_EQ(typo_distance("abcd", "badc"), 2u);
  EXPECT_EQ(typo_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(typo_distance("Adam", "adam"), 0u);  // ASCII case does not count
  EXPECT_EQ(typo_distance("train", "trian"), typo_distance("trian", "train"));
}

TEST(ClosestName, SuggestsOnlyNamesCloseEnoughToBeATypo) {
  const std::vector<std::string> commands = {"average", "bleu", "eval", "train", "translate"};
  EXPECT_EQ(closest_name("trian", commands), "train");
  EXPECT_EQ(closest_name("evl", commands), "eval");
  EXPECT_EQ(closest_name("translte", commands), "translate");
  EXPECT_EQ(closest_name("xyzzy", commands), "");     // nothing near
  EXPECT_EQ(closest_name("train", commands), "");     // an exact name is not a typo
  EXPECT_EQ(closest_name("", commands), "");          // nothing typed
  EXPECT_EQ(closest_name("ev", {"eval"}), "");        // 2 edits in 2 letters is not a typo
  EXPECT_EQ(closest_name("evaluate", {"eval"}), "");  // 4 edits: a different word
  EXPECT_EQ(closest_name("dott", {"concat", "dot", "general"}), "dot");
  EXPECT_EQ(closest_name("x", {"y"}), "y");  // one letter: one edit allowed
  // The closest wins over an earlier, farther one; of equally close names the first.
  EXPECT_EQ(closest_name("lr_decay", {"lr_decays_x", "lr_decay_"}), "lr_decay_");
  EXPECT_EQ(closest_name("ab", {"ax", "ay"}), "ax");
}

TEST(DidYouMean, IsAnErrorsTailOrNothing) {
  EXPECT_EQ(did_you_mean("--chekpoint", {"--checkpoint", "--src"}), "; did you mean '--checkpoint'?");
  EXPECT_EQ(did_you_mean("--qqqq", {"--checkpoint", "--src"}), "");
  EXPECT_EQ(did_you_mean("anything", {}), "");
}

}  // namespace
}  // namespace luong
