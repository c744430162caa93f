// How an interrupted trial is reported: its row shows the steps and rate of its partial run, and only the
// summary line of the attempt that just ended is read from a log every attempt appends to.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "framework/sweep/results_table.h"
#include "framework/sweep/trial_result.h"
#include "tests/data/test_files.h"

namespace luong::sweep {
namespace {

TEST(SweepInterrupted, RowShowsStepsAndRateOfThePartialRun) {
  TrialResult r;
  r.name = "t";
  r.status = TrialStatus::interrupted;
  r.steps = 826;
  r.tokens_per_s = 1234.0;
  const ResultsTable t = make_table({r}, {}, false, false);
  ASSERT_EQ(t.rows.size(), 1u);
  auto cell = [&](const std::string& column) {
    for (size_t i = 0; i < t.header.size(); ++i)
      if (t.header[i] == column) return t.rows[0][i];
    return std::string("<no column>");
  };
  EXPECT_EQ(cell("steps"), "826");
  EXPECT_EQ(cell("tokens_per_s"), "1234");
  EXPECT_EQ(cell("status"), "interrupted");
  // Not measured (killed before anything was logged): the cell stays empty rather than saying 0.
  r.tokens_per_s = 0.0;
  const ResultsTable empty = make_table({r}, {}, false, false);
  for (size_t i = 0; i < empty.header.size(); ++i) {
    if (empty.header[i] == "tokens_per_s") {
      EXPECT_EQ(empty.rows[0][i], "");
    }
  }
}

// Under mpirun a trial's log ends with Open MPI's abort banner: the error cell shows luong's own reason (the
// "aborting the job:" line the runner puts in the header), not the banner or the bare header.
TEST(SweepInterrupted, ErrorCellOfAnMpirunTrialShowsLuongsReason) {
  TrialResult r;
  r.name = "t";
  r.status = TrialStatus::failed;
  r.error =
      "luong train: exit status 1; luong: rank 0 of 2: aborting the job: file 'x.src' cannot be read: No such file or "
      "directory; last lines of t/train.log:\nMPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\n"
      "with errorcode 1.\nNOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.";
  const ResultsTable t = make_table({r}, {}, false, false);
  std::string cell;
  for (size_t i = 0; i < t.header.size(); ++i)
    if (t.header[i] == "error") cell = t.rows[0][i];
  EXPECT_EQ(cell, "luong: rank 0 of 2: aborting the job: file 'x.src' cannot be read: No such file or directory");
}

TEST(SweepInterrupted, SummaryIsReadFromTheCurrentAttemptOnly) {
  testing::TempDir dir;
  const std::string first = "step 10\n{\"steps\":10,\"stop_reason\":\"interrupted (checkpoint saved)\"}\n";
  const std::string log = dir.file("train.log", first + "step 20\n\r\033[Kstep 30 (killed)\n");
  auto all = last_json_line(log, "stop_reason");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ((*all)["steps"], 10);
  // The second attempt (after byte first.size()) printed no summary: the first one's is not its.
  EXPECT_FALSE(last_json_line(log, "stop_reason", first.size()).has_value());
  std::ofstream(log, std::ios::app) << "{\"steps\":826,\"tokens_per_s\":99.5,\"stop_reason\":\"interrupted\"}\n";
  const auto now = last_json_line(log, "stop_reason", first.size());
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ((*now)["steps"], 826);
}

TEST(SweepInterrupted, LastLoggedStepOfAMetricsLog) {
  testing::TempDir dir;
  EXPECT_EQ(last_logged_step(dir.path("none.jsonl")), 0);
  const std::string m = dir.file("metrics.jsonl", "{\"type\":\"train\",\"step\":5}\n{\"type\":\"valid\",\"step\":10}\n"
                                                  "{\"type\":\"train\",\"step\":15}\n{\"type\":\"tr");
  EXPECT_EQ(last_logged_step(m), 15);
}

}  // namespace
}  // namespace luong::sweep
