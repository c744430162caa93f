// A sweep's child processes: a stop sent the moment a child has been started (the sweep interrupted, or a trial
// pruned, right then) is not lost in the instant before the child has dropped the sweep's own signal handlers.
#include "framework/sweep/trial_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "tests/support/run_luong.h"

namespace luong::sweep {
namespace {

TEST(TrialProcess, ASigtermSentRightAfterTheStartStopsTheChild) {
  install_interrupt_handlers();  // as `luong sweep` runs: the children are forked with these handlers
  const std::string log = testing::fresh_dir("trial_process") + "/child.log";
  for (int k = 0; k < 40; ++k) {
    const pid_t pid = spawn_child({{"sleep", "30"}, log, {}});
    kill(pid, SIGTERM);
    std::optional<int> status;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!(status = poll_child(pid)) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!status) {
      kill(pid, SIGKILL);
      wait_child(pid);
      FAIL() << "start " << k << ": the SIGTERM was lost; the child ran on";
    }
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM) << describe_wait_status(*status);
  }
  EXPECT_EQ(interrupt_count(), 0) << "the signals were the children's, not the sweep's";
}

}  // namespace
}  // namespace luong::sweep
