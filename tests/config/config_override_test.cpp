// `--set path=value` overrides and the resolved dump.
#include <cmath>

#include <gtest/gtest.h>

#include "framework/io/config.h"
#include "tests/data/test_files.h"

namespace luong {
namespace {

ConfigSchema schema() {
  ConfigSchema s;
  s.add_int("seed", 7, "seed");
  s.add_int("model.layers", 2, "layers");
  s.add_number("model.dropout", 0.2, "dropout");
  s.add_bool("model.input_feeding", true, "feeding");
  s.add_string("model.deep.name", "x", "a key two sections down");
  s.add_number("optim.eps", 1e-8, "eps");
  s.add_string("device", "cpu", "device");
  s.add_string("note", "", "free text");
  return s;
}

TEST(ConfigOverride, NestedKeysOfEveryType) {
  Config c = Config::load_string(schema(), "model: {layers: 3}");
  c.set("model.layers=5");
  c.set("model.dropout=0.35");
  c.set("model.input_feeding=false");
  c.set("model.deep.name=local-p");
  c.set("optim.eps=1");
  c.set("device=cuda:1");
  EXPECT_EQ(c.get_int("model.layers"), 5);
  EXPECT_DOUBLE_EQ(c.get_number("model.dropout"), 0.35);
  EXPECT_FALSE(c.get_bool("model.input_feeding"));
  EXPECT_EQ(c.get_string("model.deep.name"), "local-p");
  EXPECT_DOUBLE_EQ(c.get_number("optim.eps"), 1.0);
  EXPECT_EQ(c.get_string("device"), "cuda:1");
  // The value is everything after the first '='.
  c.set("note=a=b");
  EXPECT_EQ(c.get_string("note"), "a=b");
  c.set("note=");
  EXPECT_EQ(c.get_string("note"), "");
}

TEST(ConfigOverride, LaterOverrideWins) {
  Config c(schema());
  c.set("seed=1");
  c.set("seed=2");
  EXPECT_EQ(c.get_int("seed"), 2);
}

TEST(ConfigOverride, TypeErrorsNameTheArgumentKeyTypeAndValue) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("model.layers=abc"), "--set model.layers=abc", "model.layers", "expected integer", "'abc'");
  EXPECT_ERROR_HAS(c.set("model.input_feeding=maybe"), "model.input_feeding", "expected boolean", "'maybe'");
  EXPECT_ERROR_HAS(c.set("model.dropout=[1]"), "model.dropout", "expected number", "a sequence");
  EXPECT_ERROR_HAS(c.set("model.layers=\"3\""), "model.layers", "expected integer");
  EXPECT_ERROR_HAS(c.set("model.layers=[1"), "--set model.layers=[1", "malformed YAML value");
  EXPECT_EQ(c.get_int("model.layers"), 2);  // a failed override leaves the value alone
}

TEST(ConfigOverride, UnknownKeysSectionsAndMalformedAssignments) {
  Config c(schema());
  EXPECT_ERROR_HAS(c.set("model.layerz=3"), "--set model.layerz=3", "unknown key 'model.layerz'",
                   "valid keys under 'model': layers, dropout, input_feeding, deep");
  EXPECT_ERROR_HAS(c.set("model.deep.nam=3"), "did you mean 'name'?", "valid keys under 'model.deep': name");
  // A misspelt section is matched against the sections and keys at its level.
  EXPECT_ERROR_HAS(c.set("modl.layers=3"), "unknown key 'modl.layers'; did you mean 'model'?");
  EXPECT_ERROR_HAS(c.set("nosuch.key=3"), "unknown key 'nosuch.key' (", "valid top-level keys: seed, model, optim");
  EXPECT_ERROR_HAS(c.set("model=3"), "'model' is a section", "layers");
  EXPECT_ERROR_HAS(c.set("model.layers"), "expected key=value");
  EXPECT_ERROR_HAS(c.set("=3"), "expected key=value");
}

TEST(ConfigDump, RoundTripsEveryValue) {
  Config c(schema());
  c.set("model.dropout=0.1");
  c.set("optim.eps=1e-300");
  c.set("model.layers=-4");
  for (const char* tricky_text : {"1", "yes", "1.5", "~", "a: b", "#x", "\"quoted\"", "back\\slash", "-dash",
                                    " padded ", ".inf", "null", "x y"}) {
    const std::string tricky = tricky_text;
    c.set("note", "'" + tricky + "'");
    ASSERT_EQ(c.get_string("note"), tricky);
    Config back = Config::load_string(schema(), c.dump(), "dump");
    EXPECT_EQ(back.get_string("note"), tricky) << c.dump();
    EXPECT_EQ(back.get_int("model.layers"), -4);
    EXPECT_EQ(back.get_number("model.dropout"), 0.1);  // exact: shortest round-trip form
    EXPECT_EQ(back.get_number("optim.eps"), 1e-300);
    EXPECT_EQ(back.dump(), c.dump());
  }
}

TEST(ConfigDump, NestedInSchemaOrderWithNumbersReadableAsNumbers) {
  Config c(schema());
  c.set("optim.eps=2");
  EXPECT_EQ(c.dump(),
            "seed: 7\nmodel:\n  layers: 2\n  dropout: 0.2\n  input_feeding: true\n  deep:\n    name: x\n"
            "optim:\n  eps: 2.0\ndevice: cpu\nnote: \"\"\n");
}

TEST(ConfigValueText, DoublesAndSpecialValues) {
  EXPECT_EQ(value_to_yaml(ConfigValue{1e-8}), "1e-08");
  EXPECT_EQ(value_to_yaml(ConfigValue{3.0}), "3.0");
  EXPECT_EQ(value_to_yaml(ConfigValue{std::numeric_limits<double>::infinity()}), ".inf");
  EXPECT_EQ(value_to_yaml(ConfigValue{int64_t{42}}), "42");
  EXPECT_EQ(value_to_yaml(ConfigValue{false}), "false");
  EXPECT_EQ(value_to_yaml(ConfigValue{std::string("general")}), "general");
  EXPECT_EQ(value_to_yaml(ConfigValue{std::string("true")}), "\"true\"");
  Config c(schema());
  c.set("model.dropout=.nan");
  EXPECT_TRUE(std::isnan(Config::load_string(schema(), c.dump()).get_number("model.dropout")));
}

}  // namespace
}  // namespace luong
