// Gradient accumulation (train.accumulate) through `luong train`: N parts of batch B take the step one batch
// of N x B takes, a run stopped and resumed while accumulating equals one never stopped, and a checkpoint
// moves between the two forms without a "changed config" warning. (One process accumulating N parts equals
// N processes exactly, dropout included: tests/dist_train, under mpirun.)
#include <gtest/gtest.h>

#include <cstring>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/model_diff.h"
#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

class AccumulateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("accumulate_data", "--train 300 --valid 20 --test 10"); }
  // SGD and no dropout unless `extra` sets it: the forms below then compute the same update, summed in
  // another order.
  static std::string args(const std::string& run_dir, int batch, int accumulate, int steps,
                          const std::string& extra = "") {
    return tiny_train_command(run_dir, data_) +
           " --quiet --set model.hidden_size=24 --set model.embedding_size=16 --set model.dropout=0" +
           " --set optim.name=sgd --set optim.lr=0.5 --set train.max_epochs=0 --set train.valid_every=0" +
           " --set train.checkpoint_every=5 --set train.keep_checkpoints=0 --set train.batch_size=" +
           std::to_string(batch) + " --set train.accumulate=" + std::to_string(accumulate) +
           " --set train.max_steps=" + std::to_string(steps) + " " + extra;
  }
  static StateDict model_of(const std::string& path) { return load_checkpoint(path).state.sub("model"); }
  static std::string data_;
};
std::string AccumulateTest::data_;

bool bitwise_equal(const StateDict& a, const StateDict& b) {
  if (a.tensors.size() != b.tensors.size() || a.tensors.empty()) return false;
  for (const auto& [name, t] : a.tensors) {
    const auto it = b.tensors.find(name);
    if (it == b.tensors.end() || it->second.nbytes() != t.nbytes() ||
        std::memcmp(t.raw(), it->second.raw(), t.nbytes()) != 0)
      return false;
  }
  return true;
}

TEST_F(AccumulateTest, PartsOfABatchTakeTheStepOfTheWholeBatch) {
  const std::string whole = fresh_dir("acc_whole"), parts = fresh_dir("acc_parts"), small = fresh_dir("acc_small");
  ASSERT_EQ(run_luong(args(whole, 16, 1, 15)).status, 0);
  const RunResult r = run_luong(args(parts, 8, 2, 15, "--set train.log_every=5 --json"));
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_EQ(run_luong(args(small, 8, 1, 15)).status, 0);
  EXPECT_LE(max_rel_diff(checkpoint_path(whole, 15), checkpoint_path(parts, 15)), 1e-6);
  // Not the same as training on one part a step: accumulation did something.
  EXPECT_GT(max_rel_diff(checkpoint_path(whole, 15), checkpoint_path(small, 15)), 1e-3);
  // And the steps trained on the tokens of both parts (the rate counts every part).
  EXPECT_NE(r.output.find("\"steps\":15"), std::string::npos) << r.output;
}

TEST_F(AccumulateTest, StoppedAndResumedWhileAccumulatingEqualsUninterrupted) {
  const std::string dropout = "--set model.dropout=0.3 --set optim.name=adam --set optim.lr=0.01";
  const std::string straight = fresh_dir("acc_straight"), stopped = fresh_dir("acc_stopped");
  ASSERT_EQ(run_luong(args(straight, 8, 3, 20, dropout)).status, 0);
  ASSERT_EQ(run_luong(args(stopped, 8, 3, 10, dropout)).status, 0);
  const RunResult resumed = run_luong(args(stopped, 8, 3, 20, dropout + " --resume auto"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_TRUE(bitwise_equal(model_of(checkpoint_path(straight, 20)), model_of(checkpoint_path(stopped, 20))));
}

// 1 x 16 and 8 accumulated twice are the same global batch, hence the same data position and steps: a run
// resumed in the other form continues as the first would have, and says nothing about a changed config.
// Another global batch (16 accumulated twice) is a change worth saying.
TEST_F(AccumulateTest, ACheckpointResumesInTheOtherFormOfTheSameGlobalBatch) {
  const std::string straight = fresh_dir("acc_form_straight"), moved = fresh_dir("acc_form_moved");
  ASSERT_EQ(run_luong(args(straight, 16, 1, 20)).status, 0);
  ASSERT_EQ(run_luong(args(moved, 16, 1, 10)).status, 0);
  std::string loud = args(moved, 8, 2, 20, "--resume auto");  // informational lines, which --quiet hides
  loud.erase(loud.find(" --quiet"), 8);
  const RunResult r = run_luong(loud);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("warning: resuming with a changed config"), std::string::npos) << r.output;
  EXPECT_LE(max_rel_diff(checkpoint_path(straight, 20), checkpoint_path(moved, 20)), 1e-6);
  EXPECT_NE(r.output.find("resuming with changed settings that keep the run's steps: train.accumulate: 1 -> 2, "
                          "train.batch_size: 16 -> 8"),
            std::string::npos)
      << r.output;
  const RunResult other = run_luong(args(moved, 8, 4, 25, "--resume auto"));
  ASSERT_EQ(other.status, 0) << other.output;
  EXPECT_NE(other.output.find("warning: resuming with a changed config (the run is no longer the same as an "
                              "uninterrupted one): train.accumulate: 2 -> 4"),
            std::string::npos)
      << other.output;
}

TEST_F(AccumulateTest, TooManyPartsForTheCorpusIsAClearError) {
  const RunResult r = run_luong(args(fresh_dir("acc_too_many"), 8, 301, 5));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("the 300 training pairs cannot be shared by 1 process(es) x train.accumulate 301 parts"),
            std::string::npos)
      << r.output;
  const RunResult zero = run_luong(args(fresh_dir("acc_zero"), 8, 0, 5));
  EXPECT_EQ(zero.status, 1) << zero.output;
  EXPECT_NE(zero.output.find("train.accumulate: value 0 is out of range [1, 10000]"), std::string::npos) << zero.output;
}

}  // namespace
}  // namespace luong::testing
