// Line ends the corpus reader accepts (LF, CRLF, a last line without one) and the one it refuses with the
// fix: CR alone (classic Mac OS), which would otherwise read as a single line, later skipped as too long.
#include <gtest/gtest.h>

#include "models/nmt/data/corpus.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using testing::TempDir;

TEST(TextReaderLineEnds, LfCrlfAndAnUnterminatedLastLine) {
  TempDir dir;
  EXPECT_EQ(read_lines(dir.file("lf.en", "a b\nc\n")), (std::vector<std::string>{"a b", "c"}));
  EXPECT_EQ(read_lines(dir.file("crlf.en", "a b\r\nc\r\n")), (std::vector<std::string>{"a b", "c"}));
  EXPECT_EQ(read_lines(dir.file("last.en", "a b\nc")), (std::vector<std::string>{"a b", "c"}));
  EXPECT_EQ(read_lines(dir.file("one.en", "one line with a stray \r in it")).size(), 1u);  // one CR: text
}

TEST(TextReaderLineEnds, CrAloneIsRefusedWithTheFix) {
  TempDir dir;
  const std::string f = dir.file("mac.en", "a b\rc d\re f\r");
  EXPECT_ERROR_HAS(read_lines(f), "mac.en' has carriage returns but no line feed", "tr '\\r' '\\n'");
}

}  // namespace
}  // namespace luong::nmt
