// The one UTF-8 decoder behind every text check (corpora, configs, sweep specs, BLEU input, error messages):
// RFC 3629's rules, the offending byte's offset, and code points for the sequences it accepts.
#include "framework/core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace luong {
namespace {

TEST(Utf8, AcceptsEveryLengthAndGivesTheCodePoint) {
  char32_t cp = 0;
  EXPECT_EQ(utf8_sequence_length("a", 0, &cp), 1);
  EXPECT_EQ(cp, U'a');
  EXPECT_EQ(utf8_sequence_length("\xC3\xA4", 0, &cp), 2);
  EXPECT_EQ(cp, U'ä');
  EXPECT_EQ(utf8_sequence_length("x\xE2\x82\xAC", 1, &cp), 3);
  EXPECT_EQ(cp, U'€');
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 0, &cp), 4);
  EXPECT_EQ(cp, U'😀');
  // The edges of each length, and the largest code point.
  EXPECT_EQ(utf8_sequence_length("\xC2\x80", 0), 2);          // U+0080
  EXPECT_EQ(utf8_sequence_length("\xE0\xA0\x80", 0), 3);      // U+0800
  EXPECT_EQ(utf8_sequence_length("\xED\x9F\xBF", 0), 3);      // U+D7FF, below the surrogates
  EXPECT_EQ(utf8_sequence_length("\xEE\x80\x80", 0), 3);      // U+E000, above them
  EXPECT_EQ(utf8_sequence_length("\xF0\x90\x80\x80", 0), 4);  // U+10000
  EXPECT_EQ(utf8_sequence_length("\xF4\x8F\xBF\xBF", 0, &cp), 4);
  EXPECT_EQ(cp, char32_t{0x10FFFF});
}

TEST(Utf8, RefusesWhatIsNotTheShortestFormOfAUnicodeScalar) {
  EXPECT_EQ(utf8_sequence_length("\x80", 0), 0);              // a stray continuation byte
  EXPECT_EQ(utf8_sequence_length("\xC0\xAF", 0), 0);          // overlong '/'
  EXPECT_EQ(utf8_sequence_length("\xC1\xBF", 0), 0);          // overlong U+007F
  EXPECT_EQ(utf8_sequence_length("\xE0\x9F\xBF", 0), 0);      // overlong U+07FF
  EXPECT_EQ(utf8_sequence_length("\xF0\x8F\xBF\xBF", 0), 0);  // overlong U+FFFF
  EXPECT_EQ(utf8_sequence_length("\xED\xA0\x80", 0), 0);      // U+D800, a surrogate
  EXPECT_EQ(utf8_sequence_length("\xED\xBF\xBF", 0), 0);      // U+DFFF
  EXPECT_EQ(utf8_sequence_length("\xF4\x90\x80\x80", 0), 0);  // U+110000
  EXPECT_EQ(utf8_sequence_length("\xF5\x80\x80\x80", 0), 0);  // a lead byte no scalar needs
  EXPECT_EQ(utf8_sequence_length("\xFF", 0), 0);
  EXPECT_EQ(utf8_sequence_length("\xE2\x82", 0), 0);   // cut short by the end
  EXPECT_EQ(utf8_sequence_length("\xE2\x82x", 0), 0);  // cut short by an ASCII byte
  EXPECT_EQ(utf8_sequence_length(std::string("\xC3\0", 2), 0), 0);
}

TEST(Utf8, FindsTheFirstInvalidByte) {
  EXPECT_EQ(utf8_invalid_offset(""), -1);
  EXPECT_EQ(utf8_invalid_offset("ok é 日本 😀"), -1);
  EXPECT_EQ(utf8_invalid_offset("ab\xFF"), 2);
  EXPECT_EQ(utf8_invalid_offset("ab\xC0\x80"), 2);         // overlong NUL
  EXPECT_EQ(utf8_invalid_offset("x\xED\xA0\x80"), 1);      // a surrogate
  EXPECT_EQ(utf8_invalid_offset("é\xE2\x82"), 2);          // truncated at the end
  EXPECT_EQ(utf8_invalid_offset("x\xF4\x90\x80\x80"), 1);  // above U+10FFFF
  EXPECT_EQ(utf8_invalid_offset("caf\xE9 au lait"), 3);    // Latin-1
}

}  // namespace
}  // namespace luong
