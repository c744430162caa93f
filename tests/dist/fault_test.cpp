// A rank that throws, exits or hangs must end the whole job with a non-zero status, promptly: these tests
// start small mpirun jobs of luong_dist_fault_helper with a 2 s watchdog and time them.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "framework/dist/bootstrap.h"

namespace luong::testing {
namespace {

struct JobResult {
  int status = -1;  // exit status of mpirun (-1: did not exit normally)
  std::string output;
  double seconds = 0;
};

JobResult run_job(const std::string& mode) {
  const std::string cmd = "mpirun --allow-run-as-root --oversubscribe -np 2 -x OMP_NUM_THREADS=1 " +
                          std::string(LUONG_DIST_FAULT_HELPER) + " " + mode + " 2000 2>&1";
  JobResult r;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 512> buf;
  while (fgets(buf.data(), buf.size(), pipe)) r.output += buf.data();
  const int raw = pclose(pipe);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  return r;
}

class FaultJob : public ::testing::Test {
 protected:
  void SetUp() override {
    // mpirun inside an mpirun job would join the outer job's runtime: these tests start their own.
    if (launched_by_mpi()) GTEST_SKIP() << "started by mpirun; the fault tests launch their own jobs";
    if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun not found";
  }
};

// Generous against a loaded CI machine, far below "hangs forever" (the helper would sleep 10 minutes).
constexpr double kPromptly = 45.0;

TEST_F(FaultJob, HealthyJobSucceeds) {
  const JobResult r = run_job("ok");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("fault helper: rank 0 done"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fault helper: rank 1 done"), std::string::npos) << r.output;
}

TEST_F(FaultJob, UncaughtExceptionOnOneRankAbortsTheJobNamingTheRank) {
  const JobResult r = run_job("throw");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, kPromptly) << r.output;
  EXPECT_NE(r.output.find("rank 1 of 2: aborting the job: uncaught exception: injected failure on purpose"),
            std::string::npos) << r.output;
}

TEST_F(FaultJob, RankThatExitsEndsTheJob) {
  const JobResult r = run_job("exit");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, kPromptly) << r.output;
  EXPECT_EQ(r.output.find("fault helper: rank 0 done"), std::string::npos) << r.output;
}

TEST_F(FaultJob, HungRankTripsTheWatchdogOfTheOthers) {
  const JobResult r = run_job("hang");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_GE(r.seconds, 2.0) << "aborted before the 2 s timeout: " << r.output;
  EXPECT_LT(r.seconds, kPromptly) << r.output;
  EXPECT_NE(r.output.find("watchdog: rank 0: all_reduce_sum of float32(1000) on cpu did not complete within 2 s"),
            std::string::npos) << r.output;
  // Both ways of setting the timeout are named: luong train takes it from its config, not the environment.
  EXPECT_NE(r.output.find("dist.timeout_s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("LUONG_DIST_TIMEOUT_S"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace luong::testing
