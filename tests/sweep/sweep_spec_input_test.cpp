// Sweep spec input that used to be misread or reported poorly: several YAML documents in one file (all but the
// first were dropped), binary files, `!!str`-tagged override values, and numbers a double cannot hold.
#include <gtest/gtest.h>

#include <string>

#include "framework/sweep/sweep_spec.h"
#include "models/nmt/nmt_config.h"
#include "tests/data/test_files.h"

namespace luong::sweep {
namespace {

const std::string kBase = std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml";

SweepSpec parse(const std::string& text) { return parse_sweep_spec(text, "specs/s.yaml"); }

TEST(SweepSpecInput, MoreThanOneDocumentIsAnError) {
  EXPECT_ERROR_HAS(parse("base: " + kBase + "\ngrid: {optim.lr: [1]}\n---\ngrid: {optim.lr: [2]}\n"),
                   "sweep spec specs/s.yaml:3: more than one YAML document (---); a sweep spec is one mapping");
  // One document with a leading marker is fine.
  EXPECT_EQ(parse("---\nbase: " + kBase + "\ngrid: {optim.lr: [1, 2]}\n").grid.size(), 1u);
}

TEST(SweepSpecInput, BinaryFileIsNotATextFile) {
  testing::TempDir dir;
  const std::string f = dir.file("s.yaml", "base: " + kBase + "\n" + std::string("\x7f" "ELF\0\0", 6));
  EXPECT_ERROR_HAS(load_sweep_spec(f), "s.yaml is not a text file (NUL byte at line 2)");
}

TEST(SweepSpecInput, TextThatIsNotUtf8IsRefusedWhereItIs) {
  // A grid value in Latin-1 would reach the trial's JSON records as bytes JSON cannot hold.
  EXPECT_ERROR_HAS(parse("base: " + kBase + "\ngrid:\n  data.train_src: [/x/\xFF.src]\n"),
                   "specs/s.yaml:3:23: invalid UTF-8 (byte 0xFF); a sweep spec is UTF-8 text");
  EXPECT_EQ(parse("base: " + kBase + "\ngrid:\n  data.train_src: [/x/é.src]\n").grid.size(), 1u);
}

// A NUL byte (YAML's \0 escape) would cut a path or command word; an application tag is not read; a core
// tag reaches --set, where the config refuses `!!float 3` for an integer as it would in a config file.
TEST(SweepSpecInput, NulBytesAndTagsAreRefusedWhereTheyAre) {
  const std::string nul = testing::error_of([&] { parse("base: \"" + kBase + "\\0junk\"\n"); });
  EXPECT_NE(nul.find("specs/s.yaml:1: base: the value '" + kBase + "\\x00junk' (a string: quoted) contains a NUL byte"),
            std::string::npos)
      << nul;
  EXPECT_ERROR_HAS(parse("base: " + kBase + "\nlaunch: [\"env\\0x\", a]\n"), "specs/s.yaml:2: launch: the value");
  EXPECT_ERROR_HAS(parse("base: " + kBase + "\ngrid: {model.layers: [!foo 3]}\n"),
                   "specs/s.yaml:2: grid.model.layers: tag !foo: luong reads no application tags");
  EXPECT_ERROR_HAS(parse("base: " + kBase + "\noverrides: {seed: !foo 3}\n"), "overrides.seed: tag !foo");
  const SweepSpec s = parse("base: " + kBase + "\ngrid: {model.layers: [!!float 3, !!int 4]}\n");
  ASSERT_EQ(s.grid.size(), 1u);
  EXPECT_EQ(s.grid[0].values[0].yaml, "!!float 3");
  EXPECT_EQ(s.grid[0].values[1].yaml, "!!int 4");
}

TEST(SweepSpecInput, StrTaggedOverrideStaysAString) {
  const SweepSpec s = parse("base: " + kBase + "\noverrides:\n  model.layers: !!str 3\n");
  ASSERT_EQ(s.overrides.size(), 1u);
  EXPECT_EQ(s.overrides[0].value.yaml, "'3'");  // `--set model.layers='3'`: a string, as the spec says
  EXPECT_ERROR_HAS(check_spec_keys(s, nmt::nmt_schema()), "specs/s.yaml:3: overrides.model.layers: expected integer");
}

TEST(SweepSpecInput, NumbersOutsideTheDoubleRangeSaySo) {
  EXPECT_ERROR_HAS(check_spec_keys(parse("base: " + kBase + "\noverrides:\n  optim.lr: 1e-400\n"), nmt::nmt_schema()),
                   "specs/s.yaml:3: overrides.optim.lr: value 1e-400 underflows to 0");
}

}  // namespace
}  // namespace luong::sweep
