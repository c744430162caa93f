// gzip decompression of inputs: any chunking gives the text, members follow each other, and damaged or
// truncated data is an error that names the input.
#include "framework/io/gzip_reader.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "tests/support/error_of.h"
#include "tests/support/gzip_bytes.h"

namespace luong {
namespace {

using testing::error_of;
using testing::gzip_bytes;

std::string text_of_lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i)
    text += "Zeile " + std::to_string(i) + ": Grüße aus Köln, line " + std::to_string(i * 7) + "\n";
  return text;
}

TEST(Gzip, AnyChunkingGivesTheText) {
  const std::string text = text_of_lines(20000);  // about 700 KB: more than one output chunk
  const std::string gz = gzip_bytes(text);
  ASSERT_TRUE(starts_gzip(gz));
  ASSERT_LT(gz.size(), text.size() / 4);
  EXPECT_EQ(gunzip(gz, "x"), text);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}}) {
    GzipInflater inflater("x");
    std::string out;
    for (size_t at = 0; at < gz.size(); at += chunk)
      inflater.feed(gz.data() + at, std::min(chunk, gz.size() - at), out);
    inflater.finish();
    EXPECT_EQ(out, text) << "chunks of " << chunk;
  }
}

TEST(Gzip, MembersFollowEachOtherAsGunzipReadsThem) {
  EXPECT_EQ(gunzip(gzip_bytes("first\n") + gzip_bytes("second\n") + gzip_bytes(""), "x"), "first\nsecond\n");
}

// Zero padding after the data (a .gz taken from a tar block) is skipped, in any chunking; other bytes after the
// data, or after the padding, are named with where they start.
TEST(Gzip, ZeroPaddingIsSkippedAndOtherTrailingBytesAreNamed) {
  const std::string gz = gzip_bytes("first\n") + gzip_bytes("second\n");
  const std::string padded = gz + std::string(512, '\0');
  EXPECT_EQ(gunzip(padded, "x"), "first\nsecond\n");
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{100}}) {
    GzipInflater inflater("x");
    std::string out;
    for (size_t at = 0; at < padded.size(); at += chunk)
      inflater.feed(padded.data() + at, std::min(chunk, padded.size() - at), out);
    inflater.finish();
    EXPECT_EQ(out, "first\nsecond\n") << "chunks of " << chunk;
  }
  EXPECT_NE(error_of([&] { gunzip(gz + "appended text\n", "file 'c.gz'"); })
                .find("file 'c.gz' has bytes after the end of its gzip data that are not gzip (from byte " +
                      std::to_string(gz.size()) + " of the compressed input)"),
            std::string::npos)
      << error_of([&] { gunzip(gz + "appended text\n", "file 'c.gz'"); });
  EXPECT_NE(error_of([&] { gunzip(gz + std::string(10, '\0') + "x", "f"); })
                .find("f has other bytes after the 10 zero bytes that follow its gzip data (from byte " +
                      std::to_string(gz.size() + 10)),
            std::string::npos);
  // A zero byte where the first member should start is no padding: the data is not gzip.
  EXPECT_NE(error_of([&] { gunzip(std::string("\x1f\x8b\0\0", 4), "g"); }).find("g is not valid gzip data"),
            std::string::npos);
}

TEST(Gzip, OnlyTheMagicNumberSaysGzip) {
  EXPECT_FALSE(starts_gzip(""));
  EXPECT_FALSE(starts_gzip("\x1f"));
  EXPECT_FALSE(starts_gzip("plain text"));
  EXPECT_TRUE(starts_gzip("\x1f\x8b"));
}

TEST(Gzip, DamagedAndTruncatedDataAreErrorsNamingTheInput) {
  const std::string gz = gzip_bytes(text_of_lines(200));
  const std::string truncated = gz.substr(0, gz.size() / 2);
  EXPECT_NE(error_of([&] { gunzip(truncated, "file 'a.gz'"); })
                .find("file 'a.gz' ends inside its gzip data after " + std::to_string(truncated.size()) +
                      " compressed bytes: the file is truncated"),
            std::string::npos);
  // Without its 8-byte trailer the text is all there but the member is not finished: still truncated.
  EXPECT_NE(error_of([&] { gunzip(gz.substr(0, gz.size() - 8), "f"); }).find("is truncated"), std::string::npos);
  std::string corrupt = gz;
  corrupt[corrupt.size() - 6] ^= 0x40;  // inside the CRC-32 of the trailer
  EXPECT_NE(error_of([&] {
              gunzip(corrupt, "file 'b.gz'");
            }).find("file 'b.gz' is not valid gzip data: incorrect data check"),
            std::string::npos)
      << error_of([&] { gunzip(corrupt, "file 'b.gz'"); });
  EXPECT_NE(error_of([&] { gunzip("\x1f\x8bnot deflate at all", "stdin"); }).find("stdin is not valid gzip data"),
            std::string::npos);
}

}  // namespace
}  // namespace luong
