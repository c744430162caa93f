// `luong gen-data`'s option checks: split sizes and sentence lengths within documented bounds (a huge
// --train ended in std::bad_alloc), messages that name the option and the rule, no negative seed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

bool has(const RunResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

TEST(GenData, OptionsAreRangeChecked) {
  const std::string dir = fresh_dir("gen_data_checks") + "/out";
  const std::pair<std::string, std::string> cases[] = {
      {"--train 99999999999", "--train must be from 1 to 10000000 sentence pairs, got 99999999999"},
      {"--train 0", "--train must be from 1 to 10000000 sentence pairs, got 0"},
      {"--valid -3", "--valid must be from 1 to 10000000 sentence pairs, got -3"},
      {"--test 0", "--test must be from 1 to 10000000 sentence pairs, got 0"},
      {"--min-len 0", "1 <= --min-len <= --max-len <= 1000 (words), got --min-len 0 and --max-len 8"},
      {"--min-len 9", "1 <= --min-len <= --max-len <= 1000 (words), got --min-len 9 and --max-len 8"},
      {"--max-len 100000000000", "got --min-len 3 and --max-len 100000000000"},
      {"--seed -1", "--seed must be >= 0, got -1"},
  };
  for (const auto& [option, message] : cases) {
    const RunResult r = run_luong("gen-data --out " + dir + " " + option);
    EXPECT_EQ(r.status, 1) << option << "\n" << r.output;
    EXPECT_TRUE(has(r, message)) << option << "\n" << r.output;
    EXPECT_FALSE(has(r, "bad_alloc")) << r.output;
    EXPECT_FALSE(has(r, "not in range")) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir)) << option;  // checked before anything is written
  }
}

// Integer options of every command: a value beyond 64 bits is a usage error naming it (CLI11 clamped it to
// INT64_MAX: --seed 99999999999999999999 ran as seed 9223372036854775807), and a leading 0 is decimal
// (CLI11 read 010 as octal 8).
TEST(GenData, IntegersAreDecimalAndNeverClamped) {
  const std::string dir = fresh_dir("gen_data_integers") + "/out";
  RunResult r = run_luong("gen-data --out " + dir + " --seed 99999999999999999999 2>&1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "--seed: value 99999999999999999999 is out of range (a 64-bit integer)")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir));
  r = run_luong("sweep " + std::string(LUONG_SOURCE_DIR) + "/configs/sweeps/attention.yaml --out " + dir +
                " --parallel 99999999999999999999 --dry-run 2>&1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r, "--parallel: value 99999999999999999999 is out of range")) << r.output;
  r = run_luong("gen-data --out " + dir + " --train 3 --valid 010 --test 1");
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(dir + "/valid.src");
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 10);
}

// A file that cannot be written (here a directory stands where train.src goes) is named with the reason, and
// no partial corpus is left: the files appear only once all six are complete.
TEST(GenData, AFailedWriteNamesTheFileAndLeavesNothing) {
  for (const std::string blocked : {"train.src", "test.tgt"}) {  // the first file and the last
    const std::string dir = fresh_dir("gen_data_blocked_" + blocked);
    std::filesystem::create_directories(dir + "/" + blocked);
    const RunResult r = run_luong("gen-data --out " + dir + " --train 5 --valid 2 --test 2 2>&1");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(has(r, "luong: error: toy data: cannot write '" + dir + "/" + blocked + "': Is a directory"))
        << r.output;
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(dir)) left.push_back(e.path().filename().string());
    EXPECT_EQ(left, std::vector<std::string>{blocked}) << "only the directory that was there";
  }
}

TEST(GenData, WritesTheRequestedSplits) {
  const std::string dir = fresh_dir("gen_data_ok");
  const RunResult r =
      run_luong("gen-data --out " + dir + " --train 7 --valid 1 --test 2 --min-len 1 --max-len 1 --seed 0");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "wrote " + dir + "/test.tgt")) << r.output;
  EXPECT_EQ(std::filesystem::file_size(dir + "/train.src"), 7u * 5u);  // "ba .\n": one word and the period
}

}  // namespace
}  // namespace luong::testing
