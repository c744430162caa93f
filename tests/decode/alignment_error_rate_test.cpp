// Alignment error rate: gold links in their sure and possible forms (0- and 1-based), malformed links named,
// and AER, precision and recall as Och and Ney define them, summed over sentences.
#include "models/nmt/alignment_error_rate.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"

namespace luong::nmt {
namespace {

TEST(AlignmentErrorRate, GoldLinksAreSureOrPossible) {
  const GoldAlignment g = parse_gold_alignment("0-1 2?3  4p5\t6-6", false, "gold");
  EXPECT_EQ(g.sure, (Links{{0, 1}, {6, 6}}));
  EXPECT_EQ(g.possible, (Links{{0, 1}, {2, 3}, {4, 5}, {6, 6}}));
  const GoldAlignment one = parse_gold_alignment("1-1 3p2", true, "gold");
  EXPECT_EQ(one.sure, (Links{{0, 0}}));
  EXPECT_EQ(one.possible, (Links{{0, 0}, {2, 1}}));
  EXPECT_TRUE(parse_gold_alignment("", false, "gold").possible.empty());
  const GoldAlignment back = reversed(g);
  EXPECT_EQ(back.sure, (Links{{1, 0}, {6, 6}}));
  EXPECT_EQ(back.possible, (Links{{1, 0}, {3, 2}, {5, 4}, {6, 6}}));
}

TEST(AlignmentErrorRate, MalformedLinksAreNamed) {
  for (const char* bad : {"a-b", "3", "1-", "-2", "1x2", "1--2", "1-2-3"}) {
    try {
      parse_gold_alignment(std::string("0-0 ") + bad, false, "gold g.txt line 4");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("gold g.txt line 4: '") + bad + "' is not a link"),
                std::string::npos)
          << e.what();
    }
  }
  try {
    parse_gold_alignment("1-0", true, "gold");
    ADD_FAILURE() << "a 0 accepted in a 1-based file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'1-0' counts from 0"), std::string::npos) << e.what();
  }
}

TEST(AlignmentErrorRate, CountsOverTheSet) {
  AerCounts c;
  // |A| = 3, |S| = 2, |A & S| = 1, |A & P| = 2: AER = 1 - 3/5.
  c.add({{0, 1}, {2, 3}, {9, 9}}, parse_gold_alignment("0-1 5-5 2?3", false, "gold"));
  EXPECT_DOUBLE_EQ(c.aer(), 0.4);
  EXPECT_DOUBLE_EQ(c.precision(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(c.recall(), 0.5);
  // A second sentence aligned perfectly: the counts add up before the ratio is taken.
  c.add({{0, 0}, {1, 1}}, parse_gold_alignment("0-0 1-1", false, "gold"));
  EXPECT_DOUBLE_EQ(c.aer(), 1.0 - 7.0 / 9.0);
  EXPECT_DOUBLE_EQ(c.recall(), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(AerCounts{}.aer(), 0.0);
}

}  // namespace
}  // namespace luong::nmt
