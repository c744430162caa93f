// Encoded pairs in one 32-bit array: views that read back what went in, copies between lists (and within one,
// while it grows), ids that do not fit refused.
#include "models/nmt/data/example_list.h"

#include <gtest/gtest.h>

#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using Ids = std::vector<int64_t>;

TEST(ExampleList, PairsReadBackAsTheyWereAddedInOrder) {
  ExampleList list = {{{5, 6, 7}, {8}, 3}, {{9}, {10, 11}, 7}};
  list.push_back(ExampleIds{{}, {12}, 9});  // an empty side is a view of length 0
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(to_ids(list[0].src), (Ids{5, 6, 7}));
  EXPECT_EQ(to_ids(list[0].tgt), (Ids{8}));
  EXPECT_EQ(list[0].line, 3);
  EXPECT_EQ(to_ids(list[1].src), (Ids{9}));
  EXPECT_EQ(to_ids(list[1].tgt), (Ids{10, 11}));
  EXPECT_TRUE(list[2].src.empty());
  EXPECT_EQ(to_ids(list[2].tgt), (Ids{12}));
  std::vector<int64_t> lines;
  for (const Example& e : list) lines.push_back(e.line);
  EXPECT_EQ(lines, (Ids{3, 7, 9}));
}

TEST(ExampleList, APairCopiedFromTheListItselfSurvivesTheListGrowing) {
  ExampleList list;
  list.push_back(ExampleIds{{1, 2, 3, 4}, {5, 6}, 1});
  // Each copy may move the ids the copied views point at: 200 copies of copies.
  for (size_t i = 0; i < 200; ++i) list.push_back(list[i]);
  ASSERT_EQ(list.size(), 201u);
  for (const Example& e : list) {
    EXPECT_EQ(to_ids(e.src), (Ids{1, 2, 3, 4}));
    EXPECT_EQ(to_ids(e.tgt), (Ids{5, 6}));
    EXPECT_EQ(e.line, 1);
  }
  ExampleList other;
  other.push_back(list[200]);
  EXPECT_EQ(to_ids(other[0].src), (Ids{1, 2, 3, 4}));
}

TEST(ExampleList, IdsOutside32BitsAreRefused) {
  ExampleList list;
  EXPECT_ERROR_HAS(list.push_back(ExampleIds{{1, int64_t{1} << 31}, {2}, 1}), "token id 2147483648 is outside");
  EXPECT_ERROR_HAS(list.push_back(ExampleIds{{1}, {-1}, 1}), "token id -1 is outside");
  EXPECT_TRUE(list.empty());
  list.push_back(ExampleIds{{(int64_t{1} << 31) - 1}, {0}, 1});
  EXPECT_EQ(list[0].src[0], 2147483647);
}

}  // namespace
}  // namespace luong::nmt
