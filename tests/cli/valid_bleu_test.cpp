// Validation BLEU and chrF during training (train.valid_bleu, train.valid_metric: bleu or chrf): the scores recorded
// at a step are what `luong eval` gives that step's checkpoint on the validation set; the metric picks best.h5;
// computing it changes nothing the run trains; and its settings are checked like any other.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class ValidBleuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("valid_bleu_data", "--train 600 --valid 30 --test 10"); }
  static std::string train(const std::string& run_dir, const std::string& extra = "") {
    return tiny_train_command(run_dir, data_) +
           " --quiet --set model.hidden_size=32 --set model.embedding_size=24 --set train.max_epochs=0" +
           " --set train.max_steps=240 --set train.valid_every=40 --set train.keep_checkpoints=0" +
           " --set optim.lr=0.01 --json " + extra;
  }
  static std::vector<nlohmann::json> valid_records(const std::string& run_dir) {
    std::vector<nlohmann::json> out;
    std::ifstream in(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);)
      if (auto j = nlohmann::json::parse(line); j["type"] == "valid") out.push_back(j);
    return out;
  }
  static nlohmann::json summary(const RunResult& r) {
    return nlohmann::json::parse(r.output.substr(r.output.rfind('{')));
  }
  // The highest `key` ("valid_bleu", "valid_chrf") of the records and the step it was first reached at;
  // checks that each record's "best_<key>" is the best so far.
  static std::pair<double, int64_t> best_of(const std::vector<nlohmann::json>& records, const std::string& key) {
    double best = -1;
    int64_t best_step = -1;
    for (const auto& rec : records) {
      if (const double v = rec[key].get<double>(); v > best) best = v, best_step = rec["step"].get<int64_t>();
      EXPECT_EQ(rec["best_" + key].get<double>(), best) << rec.dump();
    }
    return {best, best_step};
  }
  // The text summary of a finished run: run again with `extra` (nothing left to train), without --json.
  static RunResult text_summary(const std::string& run, const std::string& extra) {
    std::string args = train(run, extra + " --resume auto");
    args.replace(args.find(" --json "), 8, " ");
    return run_luong(args + " 2>/dev/null");
  }
  static std::string data_;
};
std::string ValidBleuTest::data_;

TEST_F(ValidBleuTest, TheRecordedScoreIsWhatEvalGivesThatCheckpointAndTheBestPicksBestH5) {
  const std::string run = fresh_dir("valid_bleu_run");
  // eval.batch_size 7 (not the default 32): validation decodes in batches of 7, eval takes it from the checkpoint.
  const RunResult r = run_luong(train(run, "--set train.valid_metric=bleu --set eval.batch_size=7") + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto records = valid_records(run);
  ASSERT_EQ(records.size(), 6u);
  const auto [best, best_step] = best_of(records, "valid_bleu");
  for (const auto& rec : records) {
    const double bleu = rec["valid_bleu"].get<double>();
    const RunResult e = run_luong("eval --checkpoint " + checkpoint_path(run, rec["step"].get<int64_t>()) + " --src " +
                                  data_ + "/valid.src --ref " + data_ + "/valid.tgt --json 2>/dev/null");
    ASSERT_EQ(e.status, 0) << e.output;
    EXPECT_NEAR(nlohmann::json::parse(e.output)["bleu"].get<double>(), bleu, 1e-9) << "step " << rec["step"];
    EXPECT_NEAR(nlohmann::json::parse(e.output)["chrf"].get<double>(), rec["valid_chrf"].get<double>(), 1e-9)
        << "step " << rec["step"];
  }
  EXPECT_GT(best, records.front()["valid_bleu"].get<double>()) << "the model learned something";
  const auto s = summary(r);
  EXPECT_EQ(s["best_valid_bleu"].get<double>(), best);
  EXPECT_EQ(s["last_valid_bleu"].get<double>(), records.back()["valid_bleu"].get<double>());
  EXPECT_EQ(load_checkpoint(best_checkpoint_path(run)).state.ints.at("trainer/step"), best_step);
  // The text summary names the best score too.
  const RunResult text = text_summary(run, "--set train.valid_metric=bleu");
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find(str("best valid bleu ", best)), std::string::npos) << text.output;
}

// train.valid_translations: a file per validation, named by its step, holding what `luong translate` gives that
// step's checkpoint (with the eval.* settings the checkpoint stores, as validation used them); --overwrite removes
// them with the earlier run; without validation scoring the key is a warning.
TEST_F(ValidBleuTest, KeptValidationTranslationsAreWhatTranslateGivesThatStepsCheckpoint) {
  const std::string run = fresh_dir("valid_translations_run");
  const RunResult r = run_luong(train(run,
                                      "--set train.valid_bleu=true --set train.valid_translations=true "
                                      "--set train.max_steps=120 --set eval.beam_size=3 --set eval.batch_size=4") +
                                " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(run + "/valid_translations"))
    files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"step-120.txt", "step-40.txt", "step-80.txt"}));
  const auto records = valid_records(run);
  ASSERT_EQ(records.size(), 3u);
  std::string previous;
  for (const auto& rec : records) {
    const int64_t step = rec["step"].get<int64_t>();
    std::ifstream in(run + "/valid_translations/step-" + std::to_string(step) + ".txt");
    const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const RunResult t = run_luong_shell(std::string(LUONG_BINARY) + " translate --checkpoint " +
                                        checkpoint_path(run, step) + " < " + data_ + "/valid.src 2>/dev/null");
    ASSERT_EQ(t.status, 0) << t.output;
    EXPECT_EQ(kept, t.output) << "step " << step;
    EXPECT_EQ(std::count(kept.begin(), kept.end(), '\n'), 30) << "step " << step;
    EXPECT_NE(kept, previous) << "the translations changed as the model trained";
    previous = kept;
  }
  const RunResult over = run_luong(train(run, "--overwrite --set train.max_steps=10") + " 2>&1");
  ASSERT_EQ(over.status, 0) << over.output;
  EXPECT_FALSE(std::filesystem::exists(run + "/valid_translations")) << over.output;

  const RunResult unused = run_luong(
      train(fresh_dir("valid_translations_unused"), "--set train.valid_translations=true --set train.max_steps=1") +
      " 2>&1");
  ASSERT_EQ(unused.status, 0) << unused.output;
  EXPECT_NE(unused.output.find("warning: train.valid_translations = true has no effect: validations translate the "
                               "validation set only with train.valid_bleu = true or train.valid_metric bleu or chrf"),
            std::string::npos)
      << unused.output;
}

// eval.chrf_word_order 2: validation records chrF2++, the score `luong eval` gives the checkpoint by default (it
// takes the order from the checkpoint) and with --chrf-word-order 2; --chrf-word-order 0 gives chrF2 instead.
TEST_F(ValidBleuTest, ChrfPlusPlusInValidationIsTheCheckpointsEvalChrf) {
  const std::string run = fresh_dir("valid_chrfpp_run");
  const RunResult r = run_luong(train(run,
                                      "--set train.valid_bleu=true --set eval.chrf_word_order=2 "
                                      "--set train.max_steps=80") +
                                " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto records = valid_records(run);
  ASSERT_EQ(records.size(), 2u);
  const std::string eval = "eval --checkpoint " + checkpoint_path(run, records.back()["step"].get<int64_t>()) +
                           " --src " + data_ + "/valid.src --ref " + data_ + "/valid.tgt --json";
  const RunResult by_default = run_luong(eval + " 2>/dev/null"),
                  plain = run_luong(eval + " --chrf-word-order 0 2>/dev/null");
  ASSERT_EQ(by_default.status, 0) << by_default.output;
  const auto d = nlohmann::json::parse(by_default.output), p = nlohmann::json::parse(plain.output);
  EXPECT_NEAR(d["chrf"].get<double>(), records.back()["valid_chrf"].get<double>(), 1e-9);
  EXPECT_EQ(d["chrf_signature"].get<std::string>().find("nw:2|") != std::string::npos, true) << d;
  EXPECT_NE(p["chrf"], d["chrf"]);
  EXPECT_NE(p["chrf_signature"].get<std::string>().find("nw:0|"), std::string::npos) << p;
}

// train.valid_metric: chrf picks best.h5 by the validation chrF (higher is better), which may be another
// step than BLEU's best; the summaries name it.
TEST_F(ValidBleuTest, ChrfAsTheMetricPicksBestH5) {
  const std::string run = fresh_dir("valid_chrf_run");
  const RunResult r = run_luong(train(run, "--set train.valid_metric=chrf") + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto records = valid_records(run);
  ASSERT_EQ(records.size(), 6u);
  const auto [best, best_step] = best_of(records, "valid_chrf");
  for (const auto& rec : records) EXPECT_FALSE(rec.contains("best_valid_bleu")) << rec.dump();
  EXPECT_GT(best, records.front()["valid_chrf"].get<double>()) << "the model learned something";
  EXPECT_EQ(load_checkpoint(best_checkpoint_path(run)).state.ints.at("trainer/step"), best_step);
  const auto s = summary(r);
  EXPECT_EQ(s["best_valid_chrf"].get<double>(), best);
  EXPECT_EQ(s["last_valid_chrf"].get<double>(), records.back()["valid_chrf"].get<double>());
  EXPECT_EQ(s["last_valid_bleu"].get<double>(), records.back()["valid_bleu"].get<double>());
  const RunResult text = text_summary(run, "--set train.valid_metric=chrf");
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find(str("best valid chrf ", best, ", ")), std::string::npos) << text.output;
  // The run's best checkpoint measures chrF: resuming it under BLEU would compare one score with the other.
  const RunResult other =
      run_luong(train(run, "--set train.valid_metric=bleu --set train.max_steps=280 --resume auto") + " 2>&1");
  EXPECT_EQ(other.status, 1) << other.output;
  EXPECT_NE(
      other.output.find("that run picks its best checkpoint by chrf (train.valid_metric: chrf), this one by bleu"),
      std::string::npos)
      << other.output;
}

TEST_F(ValidBleuTest, ScoringTheValidationSetChangesNothingTheRunTrains) {
  const std::string plain = fresh_dir("valid_bleu_plain"), scored = fresh_dir("valid_bleu_scored");
  const RunResult a = run_luong(train(plain) + " 2>/dev/null"),
                  b = run_luong(train(scored, "--set train.valid_bleu=true") + " 2>/dev/null");
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  auto strip = [](std::vector<nlohmann::json> v) {
    for (auto& rec : v)
      for (const char* k : {"elapsed_s", "valid_bleu", "valid_chrf"}) rec.erase(k);
    return v;
  };
  const auto with_bleu = valid_records(scored);
  ASSERT_FALSE(with_bleu.empty());
  for (const auto& rec : with_bleu) EXPECT_TRUE(rec.contains("valid_bleu")) << rec.dump();
  EXPECT_EQ(strip(valid_records(plain)), strip(with_bleu));
  const Checkpoint x = load_checkpoint(checkpoint_path(plain, 240)), y = load_checkpoint(checkpoint_path(scored, 240));
  for (const auto& [name, t] : x.state.tensors)
    if (name.rfind("model/", 0) == 0) {
      EXPECT_EQ(t.to_vector(), y.state.tensors.at(name).to_vector()) << name;
    }
  // The summary names the score; best.h5 is still picked by perplexity.
  EXPECT_TRUE(summary(b).contains("last_valid_bleu"));
  EXPECT_FALSE(summary(b).contains("best_valid_bleu"));

  // Turning it on when resuming keeps the run's steps: no warning about a changed run; the text summary
  // names the last validation's score.
  std::string resume_args = train(plain, "--set train.valid_bleu=true --set train.max_steps=280 --resume auto");
  resume_args.replace(resume_args.find(" --json "), 8, " ");
  const RunResult resumed = run_luong(resume_args + " 2>&1");
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_EQ(resumed.output.find("no longer the same"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find(str("last valid bleu ", valid_records(plain).back()["valid_bleu"].get<double>())),
            std::string::npos)
      << resumed.output;
}

TEST_F(ValidBleuTest, SettingsAreCheckedAndAMissingValidationSetIsNamed) {
  const std::string run = fresh_dir("valid_bleu_settings");
  const RunResult bad = run_luong(train(run, "--set train.valid_metric=rouge") + " 2>&1");
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("train.valid_metric"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("bleu"), std::string::npos) << bad.output;
  for (const std::string metric : {"bleu", "chrf"}) {
    const RunResult none = run_luong(train(run, "--set train.valid_metric=" + metric +
                                                    " --set data.valid_src= --set data.valid_tgt= "
                                                    "--set train.max_steps=5 --overwrite") +
                                     " 2>&1");
    EXPECT_EQ(none.status, 0) << none.output;
    EXPECT_NE(none.output.find("warning: train.valid_metric = " + metric + " has no effect without a validation set"),
              std::string::npos)
        << none.output;
  }
}

}  // namespace
}  // namespace luong::testing
