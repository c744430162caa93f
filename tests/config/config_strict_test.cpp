// Config input the loader must refuse rather than guess about: duplicate keys, a directory given as the file,
// binary bytes, integers too large for int64, infinite numbers and exclusive lower bounds.
#include <gtest/gtest.h>

#include <limits>

#include "framework/io/config.h"
#include "tests/data/test_files.h"

namespace luong {
namespace {

using testing::TempDir;

ConfigSchema schema() {
  ConfigSchema s;
  s.add_int("seed", 7, "seed").min = 0;
  s.add_int("model.layers", 2, "layers").min = 1;
  s.add_number("model.dropout", 0.2, "dropout").finite = true;
  KeySpec& lr = s.add_number("optim.lr", 1.0, "lr");
  lr.min = 0.0;
  lr.min_exclusive = true;
  lr.finite = true;
  s.add_number("eval.anything", 1.0, "not marked finite");
  return s;
}

TEST(ConfigStrict, DuplicateSectionIsAnErrorNamingFileLineAndKey) {
  TempDir dir;
  const std::string f = dir.file("d.yaml", "model:\n  layers: 1\nmodel:\n  layers: 2\n");
  EXPECT_ERROR_HAS(Config::load_file(schema(), f), "d.yaml:3: duplicate key 'model'");
}

TEST(ConfigStrict, DuplicateKeyInASectionIsAnError) {
  EXPECT_ERROR_HAS(Config::load_string(schema(), "model:\n  layers: 1\n  layers: 2\n", "d.yaml"),
                   "d.yaml:3: duplicate key 'model.layers'");
  // One key spelled two ways is the same key given twice.
  EXPECT_ERROR_HAS(Config::load_string(schema(), "model.layers: 1\nmodel:\n  layers: 2\n", "d.yaml"),
                   "d.yaml:3: duplicate key 'model.layers'");
  // A later --set still overrides the file: that is what it is for.
  Config c = Config::load_string(schema(), "model:\n  layers: 1\n");
  c.set("model.layers=3");
  c.set("model.layers=4");
  EXPECT_EQ(c.get_int("model.layers"), 4);
}

TEST(ConfigStrict, DirectoryIsNotAConfigFile) {
  TempDir dir;
  const std::string expected = "config file '" + dir.path().string() + "' is a directory, expected a YAML file";
  EXPECT_ERROR_HAS(Config::load_file(schema(), dir.path().string()), expected.c_str());
}

TEST(ConfigStrict, BinaryBytesInMalformedYamlAreEscaped) {
  // A file is refused as not UTF-8 before yaml-cpp reads it; a checkpoint's stored config (load_string) is
  // not checked that way, and yaml-cpp's own message quoting the byte is escaped.
  const std::string text("model:\n  layers: \"\\\xff\"\n");
  TempDir dir;
  EXPECT_ERROR_HAS(Config::load_file(schema(), dir.file("b.yaml", text)), "b.yaml:2:13: invalid UTF-8 (byte 0xFF)");
  const std::string msg = testing::error_of([&] { Config::load_string(schema(), text, "b.yaml"); });
  EXPECT_NE(msg.find("b.yaml:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed YAML: unknown escape character: \\xFF"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\xff'), std::string::npos) << msg;
}

TEST(ConfigStrict, PrintableEscapesControlAndInvalidUtf8Only) {
  EXPECT_EQ(printable("plain ascii"), "plain ascii");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(printable(std::string("a\xff"
                                  "b\x01\x7f",
                                  5)),
            "a\\xFFb\\x01\\x7F");
  EXPECT_EQ(printable("\xc3"), "\\xC3");                    // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xC0\\xAF");           // overlong form
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // a UTF-16 surrogate
}

TEST(ConfigStrict, IntegerTooLargeForInt64IsOutOfRange) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("seed=18446744073709551615"),
                   "--set seed=18446744073709551615: seed: value "
                   "18446744073709551615 is out of range [0, 9223372036854775807]");
  EXPECT_ERROR_HAS(c.set("model.layers=-99999999999999999999"),
                   "model.layers: value -99999999999999999999 is out "
                   "of range [1, 9223372036854775807]");
  EXPECT_ERROR_HAS(Config::load_string(schema(), "seed: 99999999999999999999\n", "s.yaml"), "s.yaml:1: seed",
                   "out of range");
  c.set("seed=9223372036854775807");  // the largest that fits is fine
  EXPECT_EQ(c.get_int("seed"), std::numeric_limits<int64_t>::max());
  EXPECT_ERROR_HAS(c.set("seed=12abc"), "expected integer");  // not a number at all: still a type error
}

TEST(ConfigStrict, NumbersMustBeFinite) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("optim.lr=.inf"), "optim.lr: value .inf is not allowed: expected a finite number in (0, inf)");
  EXPECT_ERROR_HAS(c.set("model.dropout=-.inf"), "model.dropout: value -.inf", "finite number in (-inf, inf)");
  EXPECT_ERROR_HAS(c.set("model.dropout=.nan"), "model.dropout: value .nan", "finite number");
  c.set("eval.anything=.inf");  // only keys marked finite
  EXPECT_EQ(c.get_number("eval.anything"), std::numeric_limits<double>::infinity());
}

TEST(ConfigStrict, ExclusiveLowerBound) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("optim.lr=0"), "optim.lr: value 0.0 is out of range (0, inf)");
  c.set("optim.lr=1e-300");
  EXPECT_EQ(c.get_number("optim.lr"), 1e-300);
  EXPECT_NE(schema().reference_markdown("t", "i").find("0 < x"), std::string::npos);
}

}  // namespace
}  // namespace luong
