// Checks for tests that stop a training run by signal: waiting until it is in its loop, and that the stop's
// checkpoint was written whole.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "framework/io/checkpoint_dir.h"

namespace luong::testing {

// Waits (up to 15 s) until the run in `run_dir` has written a training record to metrics.jsonl.
inline bool wait_until_training(const std::string& run_dir) {
  const std::filesystem::path metrics = std::filesystem::path(run_dir) / "metrics.jsonl";
  for (int i = 0; i < 1500; ++i) {
    std::error_code ec;
    if (std::filesystem::file_size(metrics, ec) > 0 && !ec) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `output` ends with the `--json` summary of a stopped run; the newest checkpoint in `run_dir` is the one of
// the step it stopped after, and it loads.
inline void expect_saved_at_the_stop(const std::string& run_dir, const std::string& output) {
  const size_t json = output.rfind("{\"");
  ASSERT_NE(json, std::string::npos) << "no summary: the run did not finish its stop\n" << output;
  const int64_t steps =
      nlohmann::json::parse(output.substr(json, output.find('\n', json) - json)).at("steps").get<int64_t>();
  const auto checkpoints = list_checkpoints(run_dir);
  ASSERT_FALSE(checkpoints.empty()) << output;
  EXPECT_EQ(checkpoints.back().step, steps) << output;
  const LatestCheckpoint latest = find_latest_valid(run_dir);
  ASSERT_TRUE(latest.checkpoint.has_value()) << output;
  EXPECT_TRUE(latest.skipped.empty()) << output;
}

}  // namespace luong::testing
