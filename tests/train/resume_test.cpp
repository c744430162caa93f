// Exact resume: a run SIGKILLed at arbitrary points (including during checkpoint writes) and resumed with
// --resume auto ends with parameters bitwise identical to a run that was never stopped.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/train/metrics_log.h"
#include "tests/support/model_diff.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class ResumeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("resume_data", "--train 400 --valid 40 --test 10"); }
  // A small model with dropout (so the random stream matters), Adam (so optimizer state matters) and a
  // checkpoint every 4 steps.
  std::string train_args(const std::string& run_dir, const std::string& extra = "") const {
    return tiny_train_command(run_dir, data_) +
           " --quiet --set model.hidden_size=32 --set model.embedding_size=24 --set model.dropout=0.3" +
           " --set train.batch_size=16 --set train.max_epochs=0 --set train.max_steps=120" +
           " --set train.checkpoint_every=4 --set train.valid_every=10 --set train.keep_checkpoints=2 " + extra;
  }
  static StateDict model_of(const std::string& path) { return load_checkpoint(path).state.sub("model"); }
  static std::string data_;
};
std::string ResumeTest::data_;

TEST_F(ResumeTest, KilledAndResumedRunEqualsUninterruptedRun) {
  const std::string straight = fresh_dir("resume_straight");
  const RunResult r = run_luong(train_args(straight));
  ASSERT_EQ(r.status, 0) << r.output;
  const StateDict reference = model_of(checkpoint_path(straight, 120));

  // Kills follow the run's progress, not the clock, so they land mid-run on a machine of any speed and
  // load: the first during start-up or the first steps, each later one 0-15 ms after the run has written
  // 1-3 checkpoints beyond the newest one it resumed from (so during a step or a checkpoint write).
  const std::string killed = fresh_dir("resume_killed");
  std::mt19937 rng(7);  // fixed kill schedule: a reproducible test
  int kills = 0;
  for (int attempt = 0; attempt < 40; ++attempt) {
    const auto existing = list_checkpoints(killed);
    const int64_t resumed_from = existing.empty() ? 0 : existing.back().step;
    const int64_t kill_after_step = attempt == 0 ? 0 : resumed_from + 4 * (1 + static_cast<int64_t>(rng() % 3));
    const auto delay = std::chrono::milliseconds(attempt == 0 ? 20 + rng() % 80 : rng() % 16);
    std::optional<std::chrono::steady_clock::time_point> reached;
    if (attempt == 0) reached = std::chrono::steady_clock::now();
    auto kill_now = [&] {
      if (!reached) {
        const auto files = list_checkpoints(killed);
        if (files.empty() || files.back().step < kill_after_step) return false;
        reached = std::chrono::steady_clock::now();
      }
      return std::chrono::steady_clock::now() >= *reached + delay;
    };
    if (!run_luong_and_kill_when(train_args(killed, "--resume auto"), kill_now, killed + "/log.txt")) break;
    ++kills;
  }
  EXPECT_GE(kills, 3) << "the run should have been killed several times";
  const RunResult last = run_luong(train_args(killed, "--resume auto"));  // finish whatever is left
  ASSERT_EQ(last.status, 0) << last.output;
  expect_bitwise_equal(reference, model_of(checkpoint_path(killed, 120)));
}

// A checkpoint written before data.sort_by existed (no data/sort_by entry) was made with the source-length
// order; resumed under the new default it must keep that order, or the rest of its epoch would walk another
// plan (pairs seen twice, others skipped) and the run would no longer equal an uninterrupted one.
TEST_F(ResumeTest, ACheckpointWithoutASortKeyResumesInSourceOrder) {
  // The toy task's targets are as long as their sources, which both orders sort alike: lengthen target i by
  // i % 5 words, so that they do not.
  const std::string data = fresh_dir("resume_sort_data");
  {
    std::ifstream in(data_ + "/train.tgt");
    std::ofstream out(data + "/train.tgt");
    std::string line;
    for (int i = 0; std::getline(in, line); ++i) {
      for (int k = 0; k < i % 5; ++k) line += " " + line.substr(0, line.find(' '));
      out << line << "\n";
    }
  }
  const std::string source_order =
      "--set data.train_tgt=" + data + "/train.tgt --set data.sort_by=source --set train.valid_every=0";
  const std::string straight = fresh_dir("resume_sort_straight");
  ASSERT_EQ(run_luong(train_args(straight, source_order + " --set train.max_steps=40")).status, 0);

  const std::string old = fresh_dir("resume_sort_old");
  ASSERT_EQ(run_luong(train_args(old, source_order + " --set train.max_steps=20")).status, 0);
  for (const auto& file : list_checkpoints(old)) {  // as a checkpoint of the earlier format would be
    Checkpoint c = load_checkpoint(file.path);
    ASSERT_EQ(c.state.strings.erase("data/sort_by"), 1u) << "the trainer should save its sort key";
    for (const char* written_by_the_writer : {"luong_version", "created"}) c.metadata.erase(written_by_the_writer);
    save_checkpoint(file.path, c.state, c.metadata);
  }
  const RunResult resumed = run_luong(train_args(old, "--set data.train_tgt=" + data +
                                                          "/train.tgt --set train.valid_every=0 "
                                                          "--set train.max_steps=40 --resume auto"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("keeps the batch order it started with (source"), std::string::npos) << resumed.output;
  expect_bitwise_equal(model_of(checkpoint_path(straight, 40)), model_of(checkpoint_path(old, 40)));

  // And the key is saved: a checkpoint of this version resumes in the order it was made with.
  EXPECT_EQ(load_checkpoint(checkpoint_path(old, 40)).state.strings.at("data/sort_by"), "source");
}

// "valid" records of metrics.jsonl, as (step, epoch, ppl) in file order.
std::vector<std::tuple<int64_t, int64_t, double>> valid_records(const std::string& run_dir) {
  std::vector<std::tuple<int64_t, int64_t, double>> out;
  std::ifstream in(run_dir + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "valid") out.emplace_back(j["step"], j["epoch"], j["valid_ppl"]);
  }
  return out;
}

// A run that stopped at train.max_steps on an epoch's last step validated that step before ending; resumed
// with a higher limit, it ended the epoch and validated the same parameters again, a tie the plateau
// schedule counted as no improvement (halving the rate). Extending it must equal having set the higher
// limit from the start: same parameters, the same validations, each once, labelled with its epoch.
TEST_F(ResumeTest, ExtendingARunStoppedAtAnEpochsEndEqualsAnUninterruptedRun) {
  const std::string per_epoch =
      "--set train.valid_every=0 --set optim.schedule=plateau --set optim.plateau_patience=1 --set train.max_steps=60";
  const std::string straight = fresh_dir("resume_epoch_straight");
  ASSERT_EQ(run_luong(train_args(straight, per_epoch)).status, 0);
  const auto reference = valid_records(straight);
  ASSERT_GE(reference.size(), 2u);
  const int64_t epoch_steps = std::get<0>(reference[0]);
  EXPECT_EQ(std::get<1>(reference[0]), 1) << "the first epoch's validation is epoch 1's";

  const std::string extended = fresh_dir("resume_epoch_extended");
  ASSERT_EQ(run_luong(train_args(extended, per_epoch + " --set train.max_steps=" + std::to_string(epoch_steps))).status,
            0);
  ASSERT_EQ(run_luong(train_args(extended, per_epoch + " --resume auto")).status, 0);
  expect_bitwise_equal(model_of(checkpoint_path(straight, 60)), model_of(checkpoint_path(extended, 60)));
  EXPECT_EQ(valid_records(extended), reference);
}

// train.checkpoint_minutes: saves come with wall time, not with steps or validations (here without either);
// they do not change training (the run ends with the bits of a run without them), and a run resumed from one
// of them ends with those bits too.
TEST_F(ResumeTest, TimedCheckpointsLeaveTrainingAsItIsAndResumeExactly) {
  const std::string only_final =
      "--set train.checkpoint_every=0 --set train.keep_checkpoints=0 --set "
      "data.valid_src= --set data.valid_tgt= --set train.max_steps=1000";
  const std::string reference_dir = fresh_dir("resume_timed_reference"), timed = fresh_dir("resume_timed");
  ASSERT_EQ(run_luong(train_args(reference_dir, only_final)).status, 0);
  ASSERT_EQ(list_checkpoints(reference_dir).size(), 1u);  // the final one alone
  // 0.0005 minutes = 30 ms between saves.
  const RunResult r = run_luong(train_args(timed, only_final + " --set train.checkpoint_minutes=0.0005"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto saved = list_checkpoints(timed);
  ASSERT_GE(saved.size(), 3u) << "1000 steps took under 60 ms?";
  EXPECT_LT(saved.size(), 500u) << "a save after (nearly) every step: the interval is not kept";
  const StateDict reference = model_of(checkpoint_path(reference_dir, 1000));
  expect_bitwise_equal(reference, model_of(checkpoint_path(timed, 1000)));

  const std::string resumed = fresh_dir("resume_timed_resumed");
  const std::string middle = saved[saved.size() / 2].path;
  ASSERT_EQ(run_luong(train_args(resumed, only_final + " --resume " + middle)).status, 0) << middle;
  expect_bitwise_equal(reference, model_of(checkpoint_path(resumed, 1000)));
}

// A checkpoint written just before its step's validation (an epoch's last step) is followed, when resumed,
// by that validation: a record the killed run had already written for it must not stay a second time.
TEST(MetricsLog, AResumedRunKeepsValidRecordsOnlyUpToItsCheckpointsValidation) {
  const std::string dir = fresh_dir("metrics_log_resume");
  const std::string path = dir + "/metrics.jsonl";
  std::ofstream(path) << R"({"type":"train","step":40})"
                      << "\n"
                      << R"({"type":"valid","step":40})"
                      << "\n"
                      << R"({"type":"train","step":80})"
                      << "\n"
                      << R"({"type":"valid","step":80})"
                      << "\n"
                      << R"({"type":"train","step":90})"
                      << "\n";
  {
    MetricsLog log;
    log.open(path, 80, 40);  // the checkpoint at step 80 was written before step 80's validation
  }
  std::ifstream in(path);
  std::stringstream kept;
  kept << in.rdbuf();
  EXPECT_EQ(kept.str(), std::string(R"({"type":"train","step":40})") + "\n" + R"({"type":"valid","step":40})" + "\n" +
                            R"({"type":"train","step":80})" + "\n");
}

TEST_F(ResumeTest, KilledDuringACheckpointWriteKeepsThePreviousOneAndResumesExactly) {
  const std::string straight = fresh_dir("resume_straight_w");
  ASSERT_EQ(run_luong(train_args(straight, "--set train.max_steps=20")).status, 0);
  const StateDict reference = model_of(checkpoint_path(straight, 20));

  const std::string dir = fresh_dir("resume_in_write");
  // Every checkpoint entry takes 40 ms, so each write lasts seconds; kill when the second write's
  // temporary file appears (the first checkpoint, at step 4, is complete by then).
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("LUONG_TEST_CHECKPOINT_DELAY_MS", "40", 1);
    const std::string cmd = "exec " + std::string(LUONG_BINARY) + " " + train_args(dir, "--set train.max_steps=20") +
                            " > " + dir + "/log.txt 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool killed = false;
  for (int i = 0; i < 2000 && !killed; ++i) {
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().filename().string().find("ckpt-8.h5.tmp") == 0) killed = kill(pid, SIGKILL) == 0;
    if (!killed) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(killed) << "never saw the second checkpoint being written";
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(dir, 8))) << "the interrupted write must not appear";
  EXPECT_TRUE(load_checkpoint(checkpoint_path(dir, 4)).state.ints.count("trainer/step"));
  const RunResult resumed = run_luong(train_args(dir, "--set train.max_steps=20 --resume auto --json"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("\"resumed_from\":\"" + checkpoint_path(dir, 4) + "\""), std::string::npos)
      << resumed.output;
  expect_bitwise_equal(reference, model_of(checkpoint_path(dir, 20)));
}

TEST_F(ResumeTest, ExplicitCorruptCheckpointIsAnErrorAndAutoSkipsIt) {
  const std::string dir = fresh_dir("resume_corrupt");
  ASSERT_EQ(run_luong(train_args(dir, "--set train.max_steps=8")).status, 0);
  const std::string newest = checkpoint_path(dir, 8);
  ASSERT_TRUE(std::filesystem::exists(newest));
  std::filesystem::resize_file(newest, std::filesystem::file_size(newest) / 2);  // truncate
  const RunResult explicit_run = run_luong(train_args(dir, "--set train.max_steps=12 --resume " + newest));
  EXPECT_NE(explicit_run.status, 0);
  EXPECT_NE(explicit_run.output.find(newest), std::string::npos) << explicit_run.output;
  const RunResult auto_run = run_luong(train_args(dir, "--set train.max_steps=12 --resume auto --json"));
  EXPECT_EQ(auto_run.status, 0) << auto_run.output;
  EXPECT_NE(auto_run.output.find("warning: skipping checkpoint " + newest), std::string::npos) << auto_run.output;
  EXPECT_NE(auto_run.output.find("\"resumed_from\":\"" + checkpoint_path(dir, 4) + "\""), std::string::npos)
      << auto_run.output;
}

}  // namespace
}  // namespace luong::testing
