// LineStream: lines from a pipe as they arrive, with the checks of the file reader (BOM, CRLF, a last line
// without '\n', NUL bytes and invalid UTF-8 named by line), and ready() telling a paused writer from one
// with more to come.
#include "models/nmt/data/line_stream.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/error_of.h"

namespace luong::nmt {
namespace {

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  void write(const std::string& bytes) {
    ASSERT_EQ(::write(fds[1], bytes.data(), bytes.size()), ssize_t(bytes.size()));
  }
  void close_writer() { ::close(fds[1]), fds[1] = -1; }
};

TEST(LineStream, SplitsLinesLikeTheFileReader) {
  Pipe p;
  p.write(
      "\xEF\xBB\xBF"
      "first\r\nsecond\n\nlast without newline");
  p.close_writer();
  LineStream in(p.fds[0], "standard input");
  EXPECT_EQ(in.next(), "first");
  EXPECT_EQ(in.next(), "second");
  EXPECT_EQ(in.next(), "");
  EXPECT_EQ(in.next(), "last without newline");
  EXPECT_EQ(in.next(), std::nullopt);
  EXPECT_EQ(in.next(), std::nullopt);
}

TEST(LineStream, ReadyTellsAPausedWriterFromMoreInput) {
  Pipe p;
  LineStream in(p.fds[0], "standard input");
  EXPECT_FALSE(in.ready());  // nothing written yet: next() would wait
  p.write("one\ntwo\n");
  EXPECT_TRUE(in.ready());
  EXPECT_EQ(in.next(), "one");
  EXPECT_TRUE(in.ready());  // "two" is buffered
  EXPECT_EQ(in.next(), "two");
  EXPECT_FALSE(in.ready());  // the writer paused
  p.write("thr");
  EXPECT_FALSE(in.ready());  // bytes waiting, but the line is still being written
  p.write("ee\n");
  EXPECT_TRUE(in.ready());
  EXPECT_EQ(in.next(), "three");
  p.close_writer();
  EXPECT_TRUE(in.ready());  // the end of the input: next() returns at once
  EXPECT_EQ(in.next(), std::nullopt);
}

// Lines that end with CR alone would read as one sentence: refused with the fix, as the file reader does.
TEST(LineStream, CrOnlyInputIsRefusedWithTheFix) {
  Pipe p;
  p.write("a b\rc d\re f\r");
  p.close_writer();
  LineStream in(p.fds[0], "standard input");
  const std::string msg = testing::error_of([&] { in.next(); });
  EXPECT_NE(msg.find("standard input has carriage returns but no line feed"), std::string::npos) << msg;
}

TEST(LineStream, BadBytesAreNamedByLineAndOffset) {
  {
    Pipe p;
    p.write("ok\nbad \xFF here\n");
    p.close_writer();
    LineStream in(p.fds[0], "standard input");
    EXPECT_EQ(in.next(), "ok");
    const std::string msg = testing::error_of([&] { in.next(); });
    EXPECT_NE(msg.find("standard input line 2: invalid UTF-8 at byte 4 of the line (byte 7 of the input)"),
              std::string::npos)
        << msg;
  }
  {
    Pipe p;
    p.write(std::string("a\nb\0c\n", 6));
    p.close_writer();
    LineStream in(p.fds[0], "standard input");
    in.next();
    const std::string msg = testing::error_of([&] { in.next(); });
    EXPECT_NE(msg.find("standard input line 2: NUL byte at byte 1 of the line (byte 3 of the input)"),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace luong::nmt
