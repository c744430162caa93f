// The 13a tokenizer against sacrebleu's Tokenizer13a on tricky strings (data/tokenizer_13a.json).
#include "models/nmt/bleu_tokenizer.h"

#include <gtest/gtest.h>

#include "tests/bleu/bleu_fixture.h"

namespace luong::bleu {
namespace {

TEST(Tokenizer13a, MatchesSacreBleuOnTrickyStrings) {
  const auto fixture = testing::load_bleu_json("tokenizer_13a.json");
  ASSERT_GE(fixture["cases"].size(), 40u);
  for (const auto& c : fixture["cases"]) {
    const std::string input = c["input"];
    EXPECT_EQ(tokenize_13a(input), c["tokens"].get<std::string>()) << "input: [" << input << "]";
  }
}

TEST(Tokenizer13a, HandWrittenRules) {
  EXPECT_EQ(tokenize_13a("It costs 3.5, not 1,000."), "It costs 3.5 , not 1,000 .");
  EXPECT_EQ(tokenize_13a("&amp;lt;b&amp;gt;"), "< b >");
  EXPECT_EQ(tokenize_13a("1999-2003 well-known"), "1999 - 2003 well-known");
}

TEST(PythonStrings, Whitespace) {
  EXPECT_EQ(split_whitespace("a\xC2\xA0" "b\xE3\x80\x80" "c\td  "), std::vector<std::string>({"a", "b", "c", "d"}));
  EXPECT_EQ(split_whitespace("zero\xE2\x80\x8Bwidth"), std::vector<std::string>({"zero\xE2\x80\x8Bwidth"}));
  EXPECT_EQ(rstrip_whitespace("x y \xE2\x80\x89\r"), "x y");
}

}  // namespace
}  // namespace luong::bleu
