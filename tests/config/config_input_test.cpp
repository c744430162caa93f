// Config input that used to be misread or reported poorly: several YAML documents in one file, `!!str`-tagged
// values for typed keys, values too long to echo, numbers a double cannot hold, binary files, and keys whose
// unbounded top overflowed where the value is used.
#include <gtest/gtest.h>

#include <string>

#include "models/nmt/nmt_config.h"
#include "tests/data/test_files.h"
#include "tests/support/run_luong.h"

namespace luong {
namespace {

using testing::TempDir;

ConfigSchema schema() {
  ConfigSchema s;
  s.add_int("seed", 7, "seed").min = 0;
  s.add_int("model.layers", 2, "layers").min = 1;
  s.add_string("model.name", "x", "a free-form string");
  s.add_bool("model.flag", false, "a boolean");
  KeySpec& lr = s.add_number("optim.lr", 1.0, "lr");
  lr.min = 0.0;
  lr.min_exclusive = true;
  lr.finite = true;
  return s;
}

std::string nmt_error(const std::string& assignment) {
  return testing::error_of([&] {
    Config c(nmt::nmt_schema());
    c.set(assignment);
  });
}

TEST(ConfigInput, MoreThanOneDocumentIsAnErrorNamingTheSeparatorLine) {
  EXPECT_ERROR_HAS(Config::load_string(schema(), "seed: 1\n---\nseed: 2\n", "m.yaml"),
                   "config m.yaml:2: more than one YAML document (---); a config is one mapping");
  // Also when the first document starts with its own marker, and when `...` ends the first one.
  EXPECT_ERROR_HAS(Config::load_string(schema(), "---\nseed: 1\n---\nseed: 2\n", "m.yaml"), "m.yaml:3: more than one");
  EXPECT_ERROR_HAS(Config::load_string(schema(), "seed: 1\n...\nseed: 2\n", "m.yaml"), "m.yaml:3: more than one");
  TempDir dir;
  const std::string f = dir.file("m.yaml", "model:\n  layers: 3\n---\nmodel:\n  layers: 4\n");
  EXPECT_ERROR_HAS(Config::load_file(schema(), f), "m.yaml:3: more than one YAML document");
}

TEST(ConfigInput, OneDocumentWithALeadingMarkerIsFine) {
  EXPECT_EQ(Config::load_string(schema(), "---\nseed: 2\n").get_int("seed"), 2);
  EXPECT_EQ(Config::load_string(schema(), "--- \nseed: 3\n...\n").get_int("seed"), 3);
  EXPECT_EQ(Config::load_string(schema(), "seed: 4\n# --- not a marker\nmodel: {name: \"a---b\"}\n").get_int("seed"),
            4);
}

TEST(ConfigInput, StrTaggedValueIsAStringNotANumber) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("model.layers=!!str 3"), "model.layers: expected integer, got '3' (a string: tagged !!str)");
  EXPECT_ERROR_HAS(c.set("optim.lr=!!str 0.5"), "optim.lr: expected number");
  EXPECT_ERROR_HAS(c.set("model.flag=!!str true"), "model.flag: expected boolean");
  EXPECT_ERROR_HAS(Config::load_string(schema(), "model:\n  layers: !!str 3\n", "t.yaml"),
                   "t.yaml:2: model.layers: expected integer");
  c.set("model.name=!!str 3");
  EXPECT_EQ(c.get_string("model.name"), "3");
  c.set("model.layers=!!int 5");  // a tag that agrees with the key's type is fine
  EXPECT_EQ(c.get_int("model.layers"), 5);
}

// `--set data.valid_src=#dev.src` read as a YAML comment: an empty value, and no validation, silently.
TEST(ConfigInput, AValueStartingWithAHashIsRefusedWithTheQuoting) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("model.name=#v.src"),
                   "--set model.name=#v.src:", "a value starting with '#' is a YAML comment",
                   "quote it: model.name='#v.src'");
  EXPECT_ERROR_HAS(c.set("model.name= #x"), "starting with '#'");
  c.set("model.name='#v.src'");
  EXPECT_EQ(c.get_string("model.name"), "#v.src");
  c.set("model.name=a#b");  // '#' inside a plain scalar is part of it
  EXPECT_EQ(c.get_string("model.name"), "a#b");
}

TEST(ConfigInput, LongValuesAreEchoedShortened) {
  const std::string big(100000, 'b');
  Config c(schema());
  const std::string msg = testing::error_of([&] { c.set("model.layers=" + big); });
  EXPECT_LT(msg.size(), 600u) << msg.substr(0, 600);
  EXPECT_NE(msg.find("... (100000 bytes)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.layers: expected integer"), std::string::npos) << msg;
  EXPECT_EQ(printable_excerpt("short"), "short");
  // Cut at a character boundary: "é" is two bytes and is never split.
  EXPECT_EQ(printable_excerpt(std::string(31, 'a') + "\xC3\xA9z", 31), std::string(31, 'a') + "... (34 bytes)");
  EXPECT_EQ(printable_excerpt(std::string(30, 'x') + "\xC3\xA9" + "yz", 31), std::string(30, 'x') + "... (34 bytes)");
}

TEST(ConfigInput, NumbersOutsideTheDoubleRangeSaySo) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("optim.lr=1e-400"), "optim.lr: value 1e-400 underflows to 0 (out of the float range");
  EXPECT_ERROR_HAS(c.set("optim.lr=1e400"), "optim.lr: value 1e400 overflows (out of the float range");
  EXPECT_ERROR_HAS(c.set("optim.lr=-1e400"), "value -1e400 overflows");
  EXPECT_ERROR_HAS(Config::load_string(schema(), "optim:\n  lr: 1e-999\n", "u.yaml"),
                   "u.yaml:2: optim.lr: value 1e-999 underflows to 0");
  c.set("optim.lr=1e-310");  // a denormal is still a number
  EXPECT_GT(c.get_number("optim.lr"), 0.0);
  EXPECT_ERROR_HAS(c.set("optim.lr=abc"), "optim.lr: expected number, got 'abc'");
}

TEST(ConfigInput, BinaryFileIsNotATextFile) {
  TempDir dir;
  const std::string f = dir.file("b.yaml", std::string("seed: 1\nmodel:\n  name: a") + '\0' + "b\n");
  EXPECT_ERROR_HAS(Config::load_file(schema(), f), "b.yaml is not a text file (NUL byte at line 3)");
  EXPECT_ERROR_HAS(Config::load_string(schema(), std::string("\0\1\2", 3), "z.bin"),
                   "config z.bin is not a text file (NUL byte at line 1)");
}

// YAML is Unicode text, and a config's strings reach JSON records and the sweep's comparisons of settings:
// a Latin-1 path is refused at load, naming the line, column and byte.
TEST(ConfigInput, TextThatIsNotUtf8IsRefusedWhereItIs) {
  TempDir dir;
  const std::string f = dir.file("l.yaml", "seed: 1\ndata:\n  train_src: /x/caf\xE9.src\n");
  EXPECT_ERROR_HAS(Config::load_file(nmt::nmt_schema(), f),
                   "l.yaml:3:20: invalid UTF-8 (byte 0xE9); a config is UTF-8 text");
  Config c(nmt::nmt_schema());
  EXPECT_ERROR_HAS(c.set("data.train_src=/x/caf\xE9.src"),
                   "--set data.train_src=/x/caf\\xE9.src: invalid UTF-8 (byte 0xE9) at byte 7 of the value");
  EXPECT_ERROR_HAS(c.set("data.train_src=\xC0\xAF"), "invalid UTF-8 (byte 0xC0) at byte 1");  // overlong '/'
  // UTF-8 itself is fine, in a file and in --set; a binary file is still reported as binary.
  c = Config::load_file(nmt::nmt_schema(), dir.file("u.yaml", "data:\n  train_src: /x/café.src\n"));
  c.set("data.valid_src=/x/Grüße.src");
  EXPECT_EQ(c.get_string("data.train_src"), "/x/café.src");
  EXPECT_EQ(c.get_string("data.valid_src"), "/x/Grüße.src");
  EXPECT_ERROR_HAS(Config::load_file(schema(), dir.file("b.yaml", std::string("seed: 1\xE9\0", 9))),
                   "is not a text file (NUL byte at line 1)");
}

// A read that fails part-way is an error, not the end of the file (which gave the defaults, or a config cut
// at that point), and a file that never ends (/dev/zero) is refused at a size no config reaches.
TEST(ConfigInput, ReadErrorsAndEndlessFilesAreSaid) {
  EXPECT_ERROR_HAS(Config::load_file(schema(), "/proc/self/mem"),
                   "config file '/proc/self/mem' cannot be read: Input/output error (after 0 bytes)");
  EXPECT_ERROR_HAS(Config::load_file(schema(), "/dev/zero"), "config file '/dev/zero' is larger than 16 MiB");
}

// A value with YAML's \0 escape would be cut there when used as a path, and fail only when the run writes its
// first checkpoint; tags other than the key's own type were read past.
TEST(ConfigInput, NulBytesInValuesAndForeignTagsAreRefused) {
  Config c(nmt::nmt_schema());
  EXPECT_ERROR_HAS(c.set("data.train_src=\"/x/train.src\\0junk\""),
                   "data.train_src: the value '/x/train.src\\x00junk' (a string: quoted) contains a NUL byte");
  EXPECT_ERROR_HAS(c.set("model.layers=!!float 3"), "model.layers: expected integer, got '3' (tagged !!float)");
  EXPECT_ERROR_HAS(c.set("model.layers=!foo 3"), "got '3' (tagged !foo: luong reads no application tags)");
  EXPECT_ERROR_HAS(c.set("model.layers='3'"), "model.layers: expected integer, got '3' (a string: quoted)");
  EXPECT_ERROR_HAS(Config::load_string(nmt::nmt_schema(), "model: !foo {layers: 3}\n", "t.yaml"),
                   "config t.yaml:1: model: tag !foo on a section");
  EXPECT_EQ(Config::load_string(nmt::nmt_schema(), "model: !!map {layers: 3}\n").get_int("model.layers"), 3);
  EXPECT_ERROR_HAS(c.set("model.layers=9223372036854775807"),
                   "model.layers: value 9223372036854775807 is out of range");
  // The core tags of the key's own type are fine.
  c.set("model.layers=!!int 3");
  c.set("optim.lr=!!float 1");
  c.set("optim.lr=!!int 2");
  c.set("model.input_feeding=!!bool false");
  c.set("model.attention=!!str dot");
  EXPECT_EQ(c.get_int("model.layers"), 3);
  EXPECT_EQ(c.get_number("optim.lr"), 2.0);
  EXPECT_FALSE(c.get_bool("model.input_feeding"));
}

TEST(ConfigInput, TopsThatWouldOverflowAreCapped) {
  Config c(nmt::nmt_schema());
  c.set("dist.timeout_s=604800");
  EXPECT_EQ(c.get_int("dist.timeout_s"), 604800);
  EXPECT_NE(nmt_error("dist.timeout_s=604801").find("dist.timeout_s: value 604801 is out of range [1, 604800]"),
            std::string::npos);
  // The value the QA pass found overflowing into "did not complete within -1 s".
  EXPECT_NE(nmt_error("dist.timeout_s=9300000000000000").find("out of range [1, 604800]"), std::string::npos);
  c.set("eval.max_len_ratio=100");
  EXPECT_NE(nmt_error("eval.max_len_ratio=1e19").find("eval.max_len_ratio: value 1e+19 is out of range [0.1, 100]"),
            std::string::npos)
      << nmt_error("eval.max_len_ratio=1e19");
  EXPECT_NE(nmt_error("eval.beam_size=257").find("out of range [1, 256]"), std::string::npos);
  EXPECT_NE(nmt_error("model.hidden_size=65537").find("out of range [1, 65536]"), std::string::npos);
  EXPECT_NE(nmt_error("model.embedding_size=65537").find("out of range [1, 65536]"), std::string::npos);
  EXPECT_NE(nmt_error("train.batch_size=100000001").find("out of range [1, 100000000]"), std::string::npos);
  EXPECT_NE(nmt_error("data.pool_batches=100001").find("out of range [1, 100000]"), std::string::npos);
  EXPECT_NE(nmt_error("dist.bucket_mb=1e300").find("out of range [0.001, 1048576]"), std::string::npos);
}

TEST(ConfigInput, AttentionDocNamesOnlyRegisteredScores) {
  const ConfigSchema schema = nmt::nmt_schema();  // held: find() points into it
  const KeySpec* k = schema.find("model.attention");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->doc.find("location"), std::string::npos) << k->doc;
}

TEST(ConfigInput, DocTakesNoConfig) {
  auto r = testing::run_luong("config --doc --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--doc prints the key reference and takes no config: drop --config"), std::string::npos)
      << r.output;
  r = testing::run_luong("config --doc --set model.layers=3");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("drop --set"), std::string::npos) << r.output;
}

TEST(ConfigInput, CommandReportsMultiDocumentAndBinaryFiles) {
  TempDir dir;
  auto r = testing::run_luong("config --config " + dir.file("m.yaml", "seed: 1\n---\nseed: 2\n"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("m.yaml:2: more than one YAML document (---)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace luong
