// Run-directory helpers (listing, latest valid, best + retention) and checkpoint averaging.
#include "framework/io/checkpoint_dir.h"

#include <gtest/gtest.h>

#include <limits>

#include "framework/io/checkpoint_average.h"
#include "tests/support/temp_dir.h"

namespace luong {
namespace {

using testing::TempDir;

StateDict state_at(int64_t step) {
  StateDict s;
  s.tensors["model/w"] = Tensor::full({3, 2}, static_cast<double>(step));
  s.ints["train/step"] = step;
  return s;
}

std::vector<int64_t> steps(const std::vector<CheckpointFile>& files) {
  std::vector<int64_t> out;
  for (const auto& f : files) out.push_back(f.step);
  return out;
}

TEST(CheckpointDir, ListsByNumericStepIgnoringOtherFiles) {
  TempDir dir;
  for (int64_t step : {10, 9, 100, 2}) save_checkpoint(checkpoint_path(dir.path().string(), step), state_at(step));
  testing::write_bytes(dir.file("ckpt-11.h5.tmp.123"), "partial");
  testing::write_bytes(dir.file("ckpt-x.h5"), "x");
  testing::write_bytes(dir.file("notes.txt"), "x");
  mark_best(dir.path().string(), 9);
  EXPECT_EQ(steps(list_checkpoints(dir.path().string())), std::vector<int64_t>({2, 9, 10, 100}));
  EXPECT_EQ(list_checkpoints(dir.file("does-not-exist")).size(), 0u);
  EXPECT_EQ(checkpoint_path("runs/a", 42), "runs/a/ckpt-42.h5");
}

TEST(CheckpointDir, FindLatestValidSkipsTruncatedNewest) {
  TempDir dir;
  const std::string run = dir.path().string();
  for (int64_t step : {100, 200, 300}) save_checkpoint(checkpoint_path(run, step), state_at(step));
  const std::string newest = checkpoint_path(run, 300);
  const std::string bytes = testing::read_bytes(newest);
  testing::write_bytes(newest, bytes.substr(0, bytes.size() / 2));
  testing::write_bytes(checkpoint_path(run, 400), "not hdf5 at all");

  const LatestCheckpoint latest = find_latest_valid(run);
  ASSERT_TRUE(latest.file.has_value());
  EXPECT_EQ(latest.file->step, 200);
  ASSERT_TRUE(latest.checkpoint.has_value());
  EXPECT_EQ(latest.checkpoint->state.ints.at("train/step"), 200);
  ASSERT_EQ(latest.skipped.size(), 2u);
  EXPECT_EQ(latest.skipped[0].path, checkpoint_path(run, 400));
  EXPECT_EQ(latest.skipped[1].path, newest);
  EXPECT_NE(latest.skipped[1].reason.find(newest), std::string::npos) << latest.skipped[1].reason;

  TempDir empty;
  const LatestCheckpoint none = find_latest_valid(empty.path().string());
  EXPECT_FALSE(none.file.has_value());
  EXPECT_TRUE(none.skipped.empty());
}

TEST(CheckpointDir, RetentionKeepsLastKAndBest) {
  TempDir dir;
  const std::string run = dir.path().string();
  for (int64_t step = 1; step <= 6; ++step) save_checkpoint(checkpoint_path(run, step), state_at(step));
  mark_best(run, 2);
  mark_best(run, 3);  // replaces the older best
  const auto deleted = apply_retention(run, 2);
  EXPECT_EQ(deleted.size(), 4u);
  EXPECT_EQ(steps(list_checkpoints(run)), std::vector<int64_t>({5, 6}));
  const Checkpoint best = load_checkpoint(dir.file("best.h5"));
  EXPECT_EQ(best.state.ints.at("train/step"), 3);
  EXPECT_TRUE(apply_retention(run, 2).empty());
  EXPECT_THROW(apply_retention(run, 0), Error);
  EXPECT_THROW(mark_best(run, 1), Error);  // already deleted
}

TEST(CheckpointAverage, AveragesModelTensorsKeepsTheFirstsOtherEntriesAndDropsTrainingState) {
  TempDir dir;
  std::vector<std::string> paths;
  for (int64_t step : {1, 2, 6}) {
    StateDict s = state_at(step);
    s.tensors["model/half"] = Tensor::full({2}, static_cast<double>(step), DType::bf16);
    s.tensors["model/ids"] = Tensor::from_ids({step, step}, {2});
    s.tensors["optim/m"] = Tensor::full({2}, static_cast<double>(step));
    s.ints["trainer/step"] = step;
    s.floats["schedule/lr"] = 0.5;
    s.ints["data/epoch"] = step;
    s.strings["config"] = "run " + std::to_string(step);
    paths.push_back(checkpoint_path(dir.path().string(), step));
    save_checkpoint(paths.back(), s, {{"world_size", std::to_string(step)}, {"dtype", "float32"}});
  }
  const Checkpoint avg = average_checkpoints(paths);
  EXPECT_EQ(avg.state.tensors.at("model/w").to_vector(), std::vector<double>(6, 3.0));
  EXPECT_EQ(avg.state.tensors.at("model/w").dtype(), DType::f32);
  EXPECT_EQ(avg.state.tensors.at("model/half").dtype(), DType::bf16);
  EXPECT_EQ(avg.state.tensors.at("model/half").to_vector(), std::vector<double>(2, 3.0));
  EXPECT_EQ(avg.state.tensors.at("model/ids").to_vector(), std::vector<double>(2, 1.0));  // integers: first
  EXPECT_EQ(avg.state.ints.at("train/step"), 1);
  EXPECT_EQ(avg.state.strings.at("config"), "run 1");
  // The optimizer moments, schedule, trainer counters and data position of one member are not the average's.
  EXPECT_FALSE(avg.state.tensors.count("optim/m"));
  EXPECT_FALSE(avg.state.ints.count("trainer/step"));
  EXPECT_FALSE(avg.state.floats.count("schedule/lr"));
  EXPECT_FALSE(avg.state.ints.count("data/epoch"));
  // The first file's metadata, without the attributes the writer sets itself (it refuses them).
  EXPECT_EQ(avg.metadata.at("world_size"), "1");
  EXPECT_EQ(avg.metadata.at("dtype"), "float32");
  EXPECT_FALSE(avg.metadata.count("created"));
  EXPECT_FALSE(avg.metadata.count("luong_version"));
  EXPECT_NO_THROW(save_checkpoint(dir.file("avg.h5"), avg.state, avg.metadata));
}

TEST(CheckpointAverage, NonFiniteInputsAndResultsNameFileAndParameter) {
  TempDir dir;
  StateDict a = state_at(1), b = state_at(2);
  b.tensors["model/w"].data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  save_checkpoint(dir.file("a.h5"), a);
  save_checkpoint(dir.file("b.h5"), b);
  std::string msg;
  try {
    average_checkpoints({dir.file("a.h5"), dir.file("b.h5")});
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("parameter 'model/w' in " + dir.file("b.h5") + " has a non-finite value (nan at element 3)"),
            std::string::npos)
      << msg;
  // Finite float64 inputs whose sum overflows: the average itself is not finite.
  StateDict big1, big2;
  big1.tensors["model/w"] = Tensor::full({2}, 1.5e308, DType::f64);
  big2.tensors["model/w"] = Tensor::full({2}, 1.5e308, DType::f64);
  save_checkpoint(dir.file("big1.h5"), big1);
  save_checkpoint(dir.file("big2.h5"), big2);
  msg.clear();
  try {
    average_checkpoints({dir.file("big1.h5"), dir.file("big2.h5")});
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("parameter 'model/w' of the average has a non-finite value"), std::string::npos) << msg;
}

TEST(CheckpointAverage, ShapeMismatchNamesTheParameter) {
  TempDir dir;
  StateDict a = state_at(1), b = state_at(2);
  b.tensors["model/w"] = Tensor::zeros({2, 3});
  save_checkpoint(dir.file("a.h5"), a);
  save_checkpoint(dir.file("b.h5"), b);
  try {
    average_checkpoints({dir.file("a.h5"), dir.file("b.h5")});
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'model/w' has shape (3, 2) in " + dir.file("a.h5") + " but (2, 3) in " + dir.file("b.h5")),
              std::string::npos)
        << msg;
  }
  StateDict c = state_at(3);
  c.tensors["model/extra"] = Tensor::zeros({1});
  save_checkpoint(dir.file("c.h5"), c);
  EXPECT_THROW(average_checkpoints({dir.file("a.h5"), dir.file("c.h5")}), Error);
  EXPECT_THROW(average_checkpoints({}), Error);
}

}  // namespace
}  // namespace luong
