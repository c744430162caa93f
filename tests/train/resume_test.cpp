// Exact resume: a run SIGKILLed at arbitrary points (including during checkpoint writes) and resumed with
// --resume auto ends with parameters bitwise identical to a run that was never stopped.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <random>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class ResumeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = fresh_dir("resume_data");
    const RunResult r = run_luong("gen-data --out " + data_ + " --train 400 --valid 40 --test 10");
    ASSERT_EQ(r.status, 0) << r.output;
  }
  // A small model with dropout (so the random stream matters), Adam (so optimizer state matters) and a
  // checkpoint every 4 steps.
  std::string train_args(const std::string& run_dir, const std::string& extra = "") const {
    return "train --quiet --config " + std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml --run-dir " + run_dir +
           " --set data.train_src=" + data_ + "/train.src --set data.train_tgt=" + data_ + "/train.tgt" +
           " --set data.valid_src=" + data_ + "/valid.src --set data.valid_tgt=" + data_ + "/valid.tgt" +
           " --set model.hidden_size=32 --set model.embedding_size=24 --set model.dropout=0.3" +
           " --set train.batch_size=16 --set train.max_epochs=0 --set train.max_steps=120" +
           " --set train.checkpoint_every=4 --set train.valid_every=10 --set train.keep_checkpoints=2 " + extra;
  }
  static StateDict model_of(const std::string& path) { return load_checkpoint(path).state.sub("model"); }
  static std::string data_;
};
std::string ResumeTest::data_;

void expect_bitwise_equal(const StateDict& a, const StateDict& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  ASSERT_FALSE(a.tensors.empty());
  for (const auto& [name, t] : a.tensors) {
    ASSERT_TRUE(b.tensors.count(name)) << name;
    const Tensor& u = b.tensors.at(name);
    ASSERT_EQ(t.shape(), u.shape()) << name;
    ASSERT_EQ(0, std::memcmp(t.raw(), u.raw(), t.nbytes())) << "parameter " << name << " differs";
  }
}

TEST_F(ResumeTest, KilledAndResumedRunEqualsUninterruptedRun) {
  const std::string straight = fresh_dir("resume_straight");
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_luong(train_args(straight));
  const auto full = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  ASSERT_EQ(r.status, 0) << r.output;
  const StateDict reference = model_of(checkpoint_path(straight, 120));

  const std::string killed = fresh_dir("resume_killed");
  std::mt19937 rng(7);  // fixed kill times: a reproducible test
  int kills = 0;
  for (int attempt = 0; attempt < 40; ++attempt) {
    // Kill somewhere in the first 90% of an uninterrupted run's duration (which includes start-up).
    const auto after = std::chrono::milliseconds(20 + rng() % std::max<int64_t>(1, full.count() * 9 / 10));
    if (!run_luong_and_kill(train_args(killed, "--resume auto"), after, killed + "/log.txt")) break;
    ++kills;
  }
  EXPECT_GE(kills, 3) << "the run should have been killed at least three times";
  const RunResult last = run_luong(train_args(killed, "--resume auto"));  // finish whatever is left
  ASSERT_EQ(last.status, 0) << last.output;
  expect_bitwise_equal(reference, model_of(checkpoint_path(killed, 120)));
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
  const RunResult auto_run = run_luong(train_args(dir, "--set train.max_steps=12 --resume auto"));
  EXPECT_EQ(auto_run.status, 0) << auto_run.output;
  EXPECT_NE(auto_run.output.find("skipping checkpoint"), std::string::npos) << auto_run.output;
  EXPECT_NE(auto_run.output.find("resumed from"), std::string::npos) << auto_run.output;
}

}  // namespace
}  // namespace luong::testing
