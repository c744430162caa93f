// A stop request in the middle of a validation: the validation gives up at its next batch or decoding step
// instead of finishing (a long one on a large validation set would hold up the stop's checkpoint past a
// scheduler's grace period), no step is trained after it, and the stop's checkpoint says the validation is
// pending. The resumed run does it first, so that it records the same validations and ends with the same
// parameters as a run that was never stopped. LUONG_TEST_VALIDATION_DELAY_MS slows each of the validation's
// polls down, so that the signal lands inside it.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "tests/support/run_luong.h"
#include "tests/support/stop_checks.h"

namespace luong::testing {
namespace {

using nlohmann::json;

class StopDuringValidationTest : public ::testing::Test {
 protected:
  // 400 pairs in batches of 32: 13 steps an epoch.
  static void SetUpTestSuite() { data_ = generated_corpus("stop_valid_data", "--train 400 --valid 40 --test 10"); }
  static std::string train(const std::string& run_dir, const std::string& extra) {
    return tiny_train_command(run_dir, data_) +
           " --json --set model.hidden_size=32 --set model.embedding_size=24 --set train.log_every=1" +
           " --set train.valid_bleu=true --set train.keep_checkpoints=0 " + extra;
  }
  static std::vector<json> records(const std::string& run_dir, const std::string& type) {
    std::vector<json> out;
    std::ifstream in(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);)
      if (json j = json::parse(line); j["type"] == type) {
        // Times, rates and the allocator's figures differ between processes; the rest is the run's.
        for (const char* k : {"elapsed_s", "tokens_per_s", "mem_allocated", "mem_cached", "mem_peak"}) j.erase(k);
        out.push_back(j);
      }
    return out;
  }
  static bool has_train_record(const std::string& run_dir, int64_t step) {
    for (const json& j : records(run_dir, "train"))
      if (j["step"] == step) return true;
    return false;
  }

  // Trains `settings` without a stop, then again with SIGTERM as soon as step `signal_after` (whose
  // validation follows) is logged; checks the stop and the resume against the run that was not stopped.
  void check_stop_and_resume(const std::string& name, const std::string& settings, int64_t signal_after,
                             int64_t last_step) {
    const std::string plain = fresh_dir(name + "_plain"), stopped = fresh_dir(name + "_stopped");
    const RunResult whole = run_luong(train(plain, settings) + " 2>&1");
    ASSERT_EQ(whole.status, 0) << whole.output;

    const std::string log = fresh_log_path(name);
    const pid_t pid = start_shell_command("env LUONG_TEST_VALIDATION_DELAY_MS=300 " + std::string(LUONG_BINARY) + " " +
                                          train(stopped, settings) + " > " + log + " 2>&1");
    for (int i = 0; i < 3000 && !has_train_record(stopped, signal_after); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(has_train_record(stopped, signal_after)) << file_text(log);
    // The validation starts right after that record; its first poll waits 300 ms, so 100 ms from now the
    // signal lands inside it (a signal before it would skip the validation without starting it).
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(pid, SIGTERM);
    EXPECT_EQ(wait_exit_status(pid), 143) << file_text(log);
    const std::string out = file_text(log);
    EXPECT_NE(out.find(str("validation at step ", signal_after, " cut short by the stop")), std::string::npos) << out;
    expect_saved_at_the_stop(stopped, out);
    EXPECT_EQ(list_checkpoints(stopped).back().step, signal_after) << "no step is trained after the stop\n" << out;
    for (const json& v : records(stopped, "valid")) EXPECT_LT(v["step"].get<int64_t>(), signal_after) << v.dump();
    EXPECT_EQ(load_checkpoint(checkpoint_path(stopped, signal_after)).state.ints.at("trainer/pending_valid_epoch"),
              records(plain, "valid").front()["epoch"].get<int64_t>());

    const RunResult resumed = run_luong(train(stopped, settings + " --resume auto") + " 2>&1");
    ASSERT_EQ(resumed.status, 0) << resumed.output;
    EXPECT_NE(resumed.output.find(str("validating step ", signal_after, " first")), std::string::npos)
        << resumed.output;
    EXPECT_EQ(records(stopped, "valid"), records(plain, "valid"));
    EXPECT_EQ(records(stopped, "train"), records(plain, "train"));
    const Checkpoint a = load_checkpoint(checkpoint_path(plain, last_step)),
                     b = load_checkpoint(checkpoint_path(stopped, last_step));
    for (const auto& [key, t] : a.state.tensors)
      if (key.rfind("model/", 0) == 0) {
        EXPECT_EQ(t.to_vector(), b.state.tensors.at(key).to_vector()) << key;
      }
  }
  static std::string data_;
};
std::string StopDuringValidationTest::data_;

// train.valid_every: the validation after step 10 of 20.
TEST_F(StopDuringValidationTest, AStopInAPeriodicValidationIsResumedByDoingItFirst) {
  check_stop_and_resume("periodic", "--set train.max_epochs=0 --set train.max_steps=20 --set train.valid_every=10", 10,
                        20);
}

// Validation at each epoch's end (train.valid_every: 0): the stop used to train one more step, of the next
// epoch, and the resumed run never did the first epoch's validation.
TEST_F(StopDuringValidationTest, AStopInAnEpochsValidationTrainsNoFurtherStep) {
  check_stop_and_resume("epoch_end", "--set train.max_epochs=2 --set train.valid_every=0", 13, 26);
}

}  // namespace
}  // namespace luong::testing
