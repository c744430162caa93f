// Stop signals while `luong train` saves the checkpoint of a stop: a second signal from the sender of the
// first stops at once (Ctrl-C twice), while a copy of the same request from another process (a scheduler
// signals every process of a job, mpirun relays what it receives) lets the save finish; SIGUSR1 is a stop
// request like SIGTERM, and so is SIGHUP unless ignored at start. LUONG_TEST_CHECKPOINT_DELAY_MS makes the save slow
// enough to signal during it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "framework/train/stop_signals.h"
#include "tests/support/run_luong.h"
#include "tests/support/stop_checks.h"

namespace luong::testing {
namespace {

class StopSignalTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = generated_corpus("stop_signal_data", "--train 400 --valid 20 --test 10"); }
  // A long run that saves only when it stops; each entry of that save takes `delay_ms`. `ignoring`: signals
  // ignored when it starts (`trap '' ...` in the shell that execs it, as nohup or a script's `&` do).
  pid_t start(const std::string& run_dir, int delay_ms, const std::string& ignoring = "") {
    log_ = fresh_log_path(std::filesystem::path(run_dir).filename().string());  // not in the run directory
    const std::string args = tiny_train_command(run_dir, data_) + " --json --set train.max_epochs=0" +
                             " --set train.max_steps=1000000 --set train.valid_every=1000000" +
                             " --set train.checkpoint_every=1000000 --set train.log_every=1";
    const std::string run = "env LUONG_TEST_CHECKPOINT_DELAY_MS=" + std::to_string(delay_ms) + " " + LUONG_BINARY +
                            " " + args + " > " + log_ + " 2>&1";
    const pid_t pid =
        start_shell_command(ignoring.empty() ? run : "sh -c 'trap \"\" " + ignoring + "; exec " + run + "'");
    EXPECT_TRUE(wait_until_training(run_dir)) << "training did not start";
    return pid;
  }
  std::string log() const { return file_text(log_); }
  static void signal_from_another_process(pid_t pid, int sig) {
    ASSERT_EQ(std::system(("kill -" + std::to_string(sig) + " " + std::to_string(pid)).c_str()), 0);
  }
  static std::string data_;
  std::string log_;
};
std::string StopSignalTest::data_;

// A scheduler's SIGTERM and mpirun's relay of it reach a rank from two processes within moments: one
// request. It used to count as the second signal and end the process in the middle of the stop's save.
TEST_F(StopSignalTest, TheSameRequestFromAnotherProcessLetsTheSaveFinish) {
  const std::string dir = fresh_dir("stop_relayed");
  const pid_t pid = start(dir, 100);
  kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the save has begun (it takes seconds)
  signal_from_another_process(pid, SIGTERM);
  EXPECT_EQ(wait_exit_status(pid), 143) << log();
  const std::string out = log();
  EXPECT_NE(out.find("another process relayed the same stop request"), std::string::npos) << out;
  EXPECT_EQ(out.find("stopping now"), std::string::npos) << out;
  expect_saved_at_the_stop(dir, log());
}

// Ctrl-C twice (the same sender) still stops at once, without the stop's checkpoint.
TEST_F(StopSignalTest, ASecondSignalFromTheSameSenderStopsAtOnce) {
  const std::string dir = fresh_dir("stop_twice");
  const pid_t pid = start(dir, 200);
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_status(pid), 130) << log();
  const std::string out = log();
  EXPECT_NE(out.find("stopping now (the last checkpoint written is intact)"), std::string::npos) << out;
  EXPECT_EQ(out.find("{\""), std::string::npos) << "it finished the stop instead of ending at once\n" << out;
  EXPECT_TRUE(list_checkpoints(dir).empty()) << out;  // the interrupted save left no checkpoint behind
}

// From another process, but long after the first: somebody asking again, so it stops at once.
TEST_F(StopSignalTest, ALaterSignalFromAnotherProcessStopsAtOnce) {
  const std::string dir = fresh_dir("stop_later");
  const pid_t pid = start(dir, 300);  // a save of many seconds
  kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(kRelayedSignalWindowSeconds * 1000 + 1000));
  signal_from_another_process(pid, SIGTERM);
  EXPECT_EQ(wait_exit_status(pid), 143) << log();
  EXPECT_NE(log().find("stopping now"), std::string::npos) << log();
}

// SIGUSR1 (what launch/mpirun-luong relays a Ctrl-C as, and what a batch system can send before a time
// limit) stops like SIGTERM, with its own status.
TEST_F(StopSignalTest, SigUsr1IsAStopRequest) {
  const std::string dir = fresh_dir("stop_usr1");
  const pid_t pid = start(dir, 0);
  kill(pid, SIGUSR1);
  EXPECT_EQ(wait_exit_status(pid), 128 + SIGUSR1) << log();
  EXPECT_NE(log().find("stopping after the current step, then saving a checkpoint"), std::string::npos) << log();
  expect_saved_at_the_stop(dir, log());
}

// The terminal of an ssh session closing (SIGHUP) used to kill the run where it stood; it now stops it with a
// checkpoint.
TEST_F(StopSignalTest, SigHupStopsWithACheckpoint) {
  const std::string dir = fresh_dir("stop_hup");
  const pid_t pid = start(dir, 0);
  kill(pid, SIGHUP);
  EXPECT_EQ(wait_exit_status(pid), 128 + SIGHUP) << log();
  expect_saved_at_the_stop(dir, log());
}

// `nohup luong train` must outlive its terminal, and a run a script starts with `&` ignores the script's
// Ctrl-C: SIGHUP and SIGINT ignored at start stay ignored (the run trains on; SIGTERM still stops it).
TEST_F(StopSignalTest, SignalsIgnoredAtStartStayIgnored) {
  const std::string dir = fresh_dir("stop_nohup");
  const pid_t pid = start(dir, 0, "HUP INT");
  kill(pid, SIGHUP);
  kill(pid, SIGINT);
  const auto trained_before = std::filesystem::file_size(dir + "/metrics.jsonl");
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "the run ended\n" << log();
  EXPECT_GT(std::filesystem::file_size(dir + "/metrics.jsonl"), trained_before) << "the run stopped training";
  kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit_status(pid), 143) << log();
  EXPECT_EQ(log().find("stopping after the current step"), log().rfind("stopping after the current step")) << log();
  expect_saved_at_the_stop(dir, log());
}

}  // namespace
}  // namespace luong::testing
