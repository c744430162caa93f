// load_checkpoint's errors for paths that are not checkpoint files, and average_checkpoints' compatibility
// callback (used by `luong average` to require identical vocabularies and model config).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_average.h"
#include "tests/support/error_of.h"
#include "tests/support/temp_dir.h"

namespace luong {
namespace {

using testing::TempDir;

using luong::testing::error_of;

TEST(CheckpointInputChecks, DirectoryIsNamedAsADirectory) {
  TempDir dir;
  const std::string msg = error_of([&] { load_checkpoint(dir.path().string()); });
  EXPECT_NE(msg.find(dir.path().string() + " is a directory"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("no such file"), std::string::npos) << msg;
}

StateDict small_state(double value, const std::string& vocab) {
  StateDict s;
  s.tensors["model/w"] = Tensor::from({value, value}, {2});
  s.strings["vocab/src"] = vocab;
  return s;
}

TEST(CheckpointInputChecks, AverageCallsTheCompatibilityCheckForEveryLaterFile) {
  TempDir dir;
  const std::string a = dir.file("a.h5"), b = dir.file("b.h5"), c = dir.file("c.h5");
  save_checkpoint(a, small_state(1, "x\ny\n"));
  save_checkpoint(b, small_state(3, "x\ny\n"));
  save_checkpoint(c, small_state(5, "y\nx\n"));
  std::vector<std::pair<std::string, std::string>> calls;
  const AverageCompatibility same_vocab = [&](const Checkpoint& first, const Checkpoint& other) {
    calls.emplace_back(first.path, other.path);
    EXPECT_TRUE(first.state.tensors.empty()) << "the first file's tensors are not kept";
    if (first.state.strings.at("vocab/src") != other.state.strings.at("vocab/src"))
      LUONG_FAIL("vocab/src of ", other.path, " differs from ", first.path);
  };
  const StateDict avg = average_checkpoints({a, b}, same_vocab).state;
  EXPECT_EQ(avg.tensors.at("model/w").to_vector(), (std::vector<double>{2, 2}));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::make_pair(a, b));
  const std::string msg = error_of([&] { average_checkpoints({a, b, c}, same_vocab); });
  EXPECT_NE(msg.find("vocab/src of " + c + " differs from " + a), std::string::npos) << msg;
}

}  // namespace
}  // namespace luong
