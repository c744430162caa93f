// Loading YAML configs against a schema: defaults, unknown keys, wrong types, malformed YAML, missing files.
#include <gtest/gtest.h>

#include "framework/io/config.h"
#include "tests/data/test_files.h"

namespace luong {
namespace {

using testing::TempDir;

ConfigSchema small_schema() {
  ConfigSchema s;
  s.add_int("seed", 7, "seed");
  s.add_int("model.layers", 2, "layers").min = 1;
  s.add_number("model.dropout", 0.2, "dropout");
  s.add_bool("model.input_feeding", true, "feeding");
  s.add_string("model.attention", "general", "attention");
  s.add_choice("train.batch_by", "sentences", {"sentences", "tokens"}, "unit");
  s.add_number("optim.lr", 1.0, "lr").max = 10.0;
  s.add_string("data.train_src", "", "path");
  return s;
}

TEST(ConfigLoad, DefaultsFilledWhenAbsent) {
  Config c = Config::load_string(small_schema(), "model:\n  layers: 4\n");
  EXPECT_EQ(c.get_int("model.layers"), 4);
  EXPECT_TRUE(c.is_set("model.layers"));
  EXPECT_EQ(c.get_int("seed"), 7);
  EXPECT_FALSE(c.is_set("seed"));
  EXPECT_DOUBLE_EQ(c.get_number("model.dropout"), 0.2);
  EXPECT_TRUE(c.get_bool("model.input_feeding"));
  EXPECT_EQ(c.get_string("train.batch_by"), "sentences");
  EXPECT_EQ(c.get_string("data.train_src"), "");
}

TEST(ConfigLoad, EmptyDocumentAndEmptySectionAreDefaults) {
  Config a = Config::load_string(small_schema(), "");
  Config b = Config::load_string(small_schema(), "model:\n");
  EXPECT_EQ(a.dump(), Config(small_schema()).dump());
  EXPECT_EQ(b.dump(), a.dump());
}

TEST(ConfigLoad, ValuesOfEveryType) {
  Config c = Config::load_string(small_schema(),
                                 "seed: -3\nmodel: {dropout: 1e-1, input_feeding: no, attention: dot}\n"
                                 "optim: {lr: 2}\ntrain: {batch_by: tokens}\ndata: {train_src: 'a b.txt'}\n");
  EXPECT_EQ(c.get_int("seed"), -3);
  EXPECT_DOUBLE_EQ(c.get_number("model.dropout"), 0.1);
  EXPECT_FALSE(c.get_bool("model.input_feeding"));
  EXPECT_EQ(c.get_string("model.attention"), "dot");
  EXPECT_DOUBLE_EQ(c.get_number("optim.lr"), 2.0);  // an integer is a valid number
  EXPECT_EQ(c.get_string("train.batch_by"), "tokens");
  EXPECT_EQ(c.get_string("data.train_src"), "a b.txt");
}

TEST(ConfigLoad, UnknownNestedKeyNamesPathLineAndValidKeys) {
  TempDir dir;
  const std::string f = dir.file("c.yaml", "seed: 1\nmodel:\n  layers: 3\n  layerz: 4\n");
  EXPECT_ERROR_HAS(Config::load_file(small_schema(), f), "c.yaml:4",
                   "unknown key 'model.layerz'; did you mean 'layers'?",
                   "valid keys under 'model': layers, dropout, input_feeding, attention");
}

TEST(ConfigLoad, UnknownTopLevelKeyListsTopLevelKeys) {
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "modle:\n  layers: 3\n", "x.yaml"), "x.yaml:1",
                   "unknown key 'modle'; did you mean 'model'?",
                   "valid top-level keys: seed, model, train, optim, data");
}

TEST(ConfigLoad, WrongTypeNamesPathExpectedTypeAndValue) {
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model:\n  layers: two\n", "t.yaml"), "t.yaml:2",
                   "model.layers", "expected integer", "'two'");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: {layers: 2.5}"), "model.layers", "expected integer",
                   "'2.5'");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: {input_feeding: 1}"), "model.input_feeding",
                   "expected boolean", "'1'");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: {dropout: high}"), "model.dropout", "expected number",
                   "'high'");
  // Quoting makes a string, which is not an integer.
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "seed: \"3\""), "seed", "expected integer", "'3'");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: {layers: [1, 2]}"), "model.layers",
                   "expected integer", "a sequence");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: {attention: {a: 1}}"), "model.attention",
                   "expected string", "a mapping");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: {layers: }"), "model.layers", "expected integer",
                   "null");
}

TEST(ConfigLoad, SectionGivenAScalarOrTopLevelNotAMapping) {
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: 3"), "model", "expected a mapping", "layers",
                   "'3'");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "- a\n- b\n"), "expected a mapping", "valid top-level keys");
}

TEST(ConfigLoad, RangesAndChoicesAreChecked) {
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "model: {layers: 0}"), "model.layers", "out of range", "[1,");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "optim: {lr: 11}"), "optim.lr", "out of range", "10]");
  EXPECT_ERROR_HAS(Config::load_string(small_schema(), "train: {batch_by: words}"), "train.batch_by", "'words'",
                   "sentences, tokens");
}

TEST(ConfigLoad, RegisteredNamesAreCheckedLazily) {
  ConfigSchema s = small_schema();
  s.at("model.attention").registered = [] { return std::vector<std::string>{"dot", "general", "local-p"}; };
  EXPECT_EQ(Config::load_string(s, "model: {attention: local-p}").get_string("model.attention"), "local-p");
  EXPECT_ERROR_HAS(Config::load_string(s, "model: {attention: local-x}"), "model.attention", "'local-x'",
                   "dot, general, local-p");
  EXPECT_ERROR_HAS(s.at("model.nope"), "unknown key 'model.nope'");
}

TEST(ConfigLoad, CustomCheckMessageNamesKey) {
  ConfigSchema s = small_schema();
  s.at("data.train_src").check = [](const ConfigValue& v) {
    return std::get<std::string>(v).find(' ') != std::string::npos ? std::string("no spaces please") : "";
  };
  EXPECT_ERROR_HAS(Config::load_string(s, "data: {train_src: a b}"), "data.train_src", "no spaces please");
}

TEST(ConfigLoad, MalformedYamlNamesFileAndLine) {
  TempDir dir;
  const std::string f = dir.file("bad.yaml", "seed: 1\nmodel:\n  layers: [1, 2\n  dropout: 0.1\n");
  const std::string msg = testing::error_of([&] { Config::load_file(small_schema(), f); });
  EXPECT_NE(msg.find("bad.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
  const std::string f2 = dir.file("tab.yaml", "seed: 1\nmodel:\n\tlayers: 2\n");
  EXPECT_ERROR_HAS(Config::load_file(small_schema(), f2), "tab.yaml:3", "malformed YAML");
}

TEST(ConfigLoad, MissingFileNamesIt) {
  EXPECT_ERROR_HAS(Config::load_file(small_schema(), "/nonexistent/dir/cfg.yaml"), "'/nonexistent/dir/cfg.yaml'",
                   "cannot be read", "No such file");
}

TEST(ConfigSchemaRules, RejectsInconsistentSchemas) {
  ConfigSchema s;
  s.add_int("a.b", 1, "");
  EXPECT_ERROR_HAS(s.add_int("a.b", 2, ""), "'a.b'", "twice");
  EXPECT_ERROR_HAS(s.add_int("a", 2, ""), "'a'");
  EXPECT_ERROR_HAS(s.add_int("a.b.c", 2, ""), "'a.b'");
  EXPECT_ERROR_HAS(s.add_choice("c", "x", {"y", "z"}, ""), "'x' is not one of: y, z");
  KeySpec bad;
  bad.path = "d";
  bad.type = ValueType::integer;
  bad.default_value = std::string("1");
  EXPECT_ERROR_HAS(s.add(bad), "default of 'd'");
  EXPECT_EQ(s.children(""), (std::vector<std::string>{"a"}));
  EXPECT_EQ(s.children("a"), (std::vector<std::string>{"b"}));
}

}  // namespace
}  // namespace luong
