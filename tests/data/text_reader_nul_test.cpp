// NUL bytes are not text: the corpus reader rejects them like invalid UTF-8, naming file, line and byte,
// so training fails when it reads the data instead of at the first checkpoint save.
#include <gtest/gtest.h>

#include "models/nmt/data/corpus.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using testing::TempDir;

TEST(TextReaderNul, NulByteNamesFileLineAndByteOffset) {
  TempDir dir;
  const std::string f = dir.file("train.en", std::string("one\ntwo\nthr") + '\0' + "ee\n");
  EXPECT_ERROR_HAS(read_lines(f), "train.en' line 3", "NUL byte at byte 3 of the line", "(byte 11 of the file)");
  const std::string first = dir.file("first.en", std::string("\0x\n", 3));
  EXPECT_ERROR_HAS(read_lines(first), "first.en' line 1", "NUL byte at byte 0 of the line", "(byte 0 of the file)");
}

TEST(TextReaderNul, ParallelCorpusWithNulIsRejected) {
  TempDir dir;
  const std::string src = dir.file("a.src", "a b\nc d\n");
  const std::string tgt = dir.file("a.tgt", std::string("x y\nz") + '\0' + "\n");
  EXPECT_ERROR_HAS(read_parallel(src, tgt), "a.tgt' line 2", "NUL byte at byte 1");
}

TEST(TextReaderNul, CheckNoNulAcceptsTextAndNamesTheSource) {
  EXPECT_NO_THROW(check_no_nul("plain\ntext\n", "standard input"));
  EXPECT_ERROR_HAS(check_no_nul(std::string("ab\n\ncd") + '\0', "standard input"), "standard input line 3",
                   "NUL byte at byte 2 of the line", "(byte 6 of the file)");
}

}  // namespace
}  // namespace luong::nmt
