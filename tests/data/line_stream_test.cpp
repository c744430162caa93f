// LineStream: lines from a pipe as they arrive, with the checks of the file reader (BOM, CRLF, a last line
// without '\n', NUL bytes and invalid UTF-8 named by line), and ready() telling a paused writer from one
// with more to come.
#include "models/nmt/data/line_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/error_of.h"
#include "tests/support/gzip_bytes.h"

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

// gzip input (`luong translate < input.gz`) decompresses as it arrives: a pipe fed in pieces, the magic number
// split across writes, gives the lines of the text; checks count bytes of the decompressed text.
TEST(LineStream, GzipInputIsDecompressedAsItArrives) {
  const std::string gz = testing::gzip_bytes(
      "\xEF\xBB\xBF"
      "eins\r\nzwei\n\ndrei");
  Pipe p;
  LineStream in(p.fds[0], "standard input");
  p.write(gz.substr(0, 1));  // half the magic number: not yet known to be gzip, and no line
  EXPECT_FALSE(in.ready());
  p.write(gz.substr(1, 10));
  EXPECT_FALSE(in.ready());
  p.write(gz.substr(11));
  p.close_writer();
  EXPECT_EQ(in.next(), "eins");
  EXPECT_EQ(in.next(), "zwei");
  EXPECT_EQ(in.next(), "");
  EXPECT_EQ(in.next(), "drei");
  EXPECT_EQ(in.next(), std::nullopt);

  Pipe bad;
  bad.write(testing::gzip_bytes("gut\nschl\xE4gt\n"));
  bad.close_writer();
  LineStream latin1(bad.fds[0], "standard input");
  EXPECT_EQ(latin1.next(), "gut");
  const std::string e = testing::error_of([&] { latin1.next(); });
  EXPECT_NE(e.find("standard input line 2: invalid UTF-8 at byte 4 of the line (byte 8 of the decompressed input)"),
            std::string::npos)
      << e;

  Pipe truncated;
  truncated.write(gz.substr(0, gz.size() - 4));
  truncated.close_writer();
  LineStream cut(truncated.fds[0], "standard input");
  const std::string t = testing::error_of([&] {
    while (cut.next()) {
    }
  });
  EXPECT_NE(t.find("standard input ends inside its gzip data"), std::string::npos) << t;
}

// A lone 0x1f byte might have been half of gzip's magic number; at the end of the input it is text.
TEST(LineStream, ALoneUnitSeparatorIsText) {
  Pipe p;
  p.write("\x1f");
  p.close_writer();
  LineStream in(p.fds[0], "standard input");
  EXPECT_EQ(in.next(), "\x1f");
  EXPECT_EQ(in.next(), std::nullopt);
}

}  // namespace
}  // namespace luong::nmt
