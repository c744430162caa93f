// `luong info`: what it says of a checkpoint is what the file holds (parameters counted from its tensors, the
// step, vocabularies and best validation of the run that wrote it), a run directory is listed in step order
// with its best.h5 marked, an average and a checkpoint with a parameter average say what they are, and a
// damaged file or an empty directory is an error naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class InfoCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = generated_corpus("info_cli_data", "--train 200 --valid 20 --test 5");
    run_ = fresh_dir("info_cli_run");
    const RunResult r = run_luong(tiny_train_command(run_, data_) +
                                  " --quiet --set train.max_epochs=0 --set train.max_steps=40"
                                  " --set train.checkpoint_every=20 --set train.valid_every=20"
                                  " --set train.keep_checkpoints=0");
    ASSERT_EQ(r.status, 0) << r.output;
  }
  // `luong info --json ARGS`: one object per line.
  static std::vector<nlohmann::json> info_json(const std::string& args) {
    const RunResult r = run_luong_shell(std::string(LUONG_BINARY) + " info --json " + args);
    EXPECT_EQ(r.status, 0) << r.output;
    std::vector<nlohmann::json> out;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  static std::string data_, run_;
};
std::string InfoCli::data_, InfoCli::run_;

size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST_F(InfoCli, ATrainingCheckpointSaysWhatItHoldsAndThatItResumes) {
  const std::string path = checkpoint_path(run_, 40);
  const auto objects = info_json(path);
  ASSERT_EQ(objects.size(), 1u);
  const nlohmann::json& j = objects[0];
  const Checkpoint c = load_checkpoint(path);
  int64_t parameters = 0;
  for (const auto& [name, t] : c.state.tensors)
    if (name.rfind("model/", 0) == 0) parameters += t.numel();
  EXPECT_EQ(j["parameters"], parameters);
  EXPECT_EQ(j["kind"], "training");
  EXPECT_TRUE(j["resumable"]);
  EXPECT_EQ(j["checksum"], "verified");
  EXPECT_EQ(j["created"], c.metadata.at("created"));
  EXPECT_EQ(j["step"], 40);
  EXPECT_EQ(j["optimizer_step"], c.state.ints.at("optim/step"));
  EXPECT_EQ(j["optimizer"], c.state.strings.at("optim/name"));
  EXPECT_EQ(j["world_size"], 1);
  // The run directory's vocabulary files hold one entry per line.
  EXPECT_EQ(j["src_vocab"], count_lines(run_ + "/vocab.src.txt"));
  EXPECT_EQ(j["tgt_vocab"], count_lines(run_ + "/vocab.tgt.txt"));
  EXPECT_EQ(j["subwords"], "whole words");
  EXPECT_EQ(j["model"]["attention"], "general");  // configs/tiny.yaml
  EXPECT_EQ(j["last_valid_step"], 40);
  // The best validation perplexity is the lowest that metrics.jsonl recorded.
  double lowest = 1e300;
  std::ifstream metrics(run_ + "/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const auto m = nlohmann::json::parse(line);
    if (m["type"] == "valid") lowest = std::min(lowest, m["valid_ppl"].get<double>());
  }
  EXPECT_DOUBLE_EQ(j["best_valid_ppl"].get<double>(), lowest);
  EXPECT_FALSE(j.contains("ema"));
  EXPECT_FALSE(j.contains("config"));

  const RunResult text = run_luong("info --config " + path);
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("training checkpoint: luong train --resume continues from it"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("config:\nseed: "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("  hidden_size: "), std::string::npos) << text.output;
}

TEST_F(InfoCli, ARunDirectoryIsListedInStepOrderWithItsBestMarked) {
  const auto objects = info_json(run_);
  ASSERT_EQ(objects.size(), 2u);  // best.h5 is a hard link to one of them, not listed again
  EXPECT_EQ(objects[0]["step"], 20);
  EXPECT_EQ(objects[1]["step"], 40);
  // Each step's own validation, from the run's metrics.jsonl.
  std::map<int64_t, double> recorded;
  std::ifstream metrics(run_ + "/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const auto m = nlohmann::json::parse(line);
    if (m["type"] == "valid") recorded[m["step"].get<int64_t>()] = m["valid_ppl"].get<double>();
  }
  for (const auto& j : objects)
    EXPECT_DOUBLE_EQ(j["validation"]["valid_ppl"].get<double>(), recorded.at(j["step"].get<int64_t>())) << j;
  int best = 0;
  for (const auto& j : objects) {
    if (!j["best"].get<bool>()) continue;
    ++best;
    // The best is the one whose perplexity is the run's best at that point.
    EXPECT_DOUBLE_EQ(j["best_valid_ppl"].get<double>(), j["best_valid_score"].get<double>());
    EXPECT_TRUE(std::filesystem::equivalent(j["path"].get<std::string>(), best_checkpoint_path(run_)));
  }
  EXPECT_EQ(best, 1);
  // Named alone, the step checkpoint best.h5 links to is marked too.
  for (const auto& j : objects)
    EXPECT_EQ(info_json(j["path"].get<std::string>()).at(0)["best"], j["best"]) << j["path"];

  const std::string empty = fresh_dir("info_cli_empty");
  const RunResult r = run_luong("info " + empty);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("luong: error: info: " + empty + " is a directory without checkpoints"), std::string::npos)
      << r.output;
}

TEST_F(InfoCli, AnAverageAndAParameterAverageSayWhatTheyAre) {
  const std::string dir = fresh_dir("info_cli_average"), avg = dir + "/avg.h5";
  const std::string a = checkpoint_path(run_, 20), b = checkpoint_path(run_, 40);
  ASSERT_EQ(run_luong("average -o " + avg + " " + a + " " + b).status, 0);
  const nlohmann::json j = info_json(avg).at(0);
  EXPECT_EQ(j["kind"], "average");
  EXPECT_FALSE(j["resumable"]);
  EXPECT_EQ(j["averaged_from"], nlohmann::json::array({a, b}));
  EXPECT_TRUE(j["step"].is_null());
  EXPECT_FALSE(j.contains("validation"));
  const RunResult text = run_luong("info " + avg);
  EXPECT_NE(text.output.find("average of 2 checkpoints, for eval and translate (no training state)"), std::string::npos)
      << text.output;

  const std::string ema_run = fresh_dir("info_cli_ema");
  ASSERT_EQ(run_luong(tiny_train_command(ema_run, data_) +
                      " --quiet --set train.max_epochs=0 --set train.max_steps=10 --set optim.ema_decay=0.9")
                .status,
            0);
  const nlohmann::json e = info_json(checkpoint_path(ema_run, 10)).at(0);
  EXPECT_EQ(e["ema"]["updates"], 10);
  EXPECT_DOUBLE_EQ(e["ema"]["decay"].get<double>(), 0.9);
  EXPECT_TRUE(e["resumable"]);
}

TEST_F(InfoCli, ADamagedFileIsAnErrorNamingIt) {
  const std::string dir = fresh_dir("info_cli_damaged"), cut = dir + "/ckpt-40.h5";
  {
    std::ifstream in(checkpoint_path(run_, 40), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  const RunResult r = run_luong("info " + cut);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("luong: error: checkpoint " + cut + ": "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace luong::testing
