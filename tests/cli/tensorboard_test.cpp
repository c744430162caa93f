// train.tensorboard: the run's metrics.jsonl records reach a TensorBoard event file as scalars, one per numeric
// field at the record's step, and a resumed run starts a new file whose session start drops the old file's later
// steps (those it trains again).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/train/metrics_log.h"
#include "tests/support/run_luong.h"
#include "tests/support/tfevents_reader.h"

namespace luong::testing {
namespace {

std::vector<std::string> event_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// "<type>/<field>" -> value at each step, as the records of metrics.jsonl give them.
std::map<std::pair<std::string, int64_t>, float> scalars_of_metrics(const std::string& run) {
  std::map<std::pair<std::string, int64_t>, float> out;
  std::ifstream in(run + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto rec = nlohmann::json::parse(line);
    for (const auto& [key, value] : rec.items())
      if (key != "step" && value.is_number())
        out[{scalar_tag(rec["type"].get<std::string>(), key), rec["step"].get<int64_t>()}] = value.get<float>();
  }
  return out;
}

TEST(TensorBoard, TheMetricsRecordsAreScalarsOfTheEventFile) {
  const std::string data = generated_corpus("tensorboard_data", "--train 300 --valid 20 --test 10");
  const std::string run = fresh_dir("tensorboard_run");
  const std::string train = tiny_train_command(run, data) +
                            " --quiet --set train.max_epochs=0 --set train.valid_every=20 --set train.log_every=10"
                            " --set train.tensorboard=true --set train.max_steps=";
  ASSERT_EQ(run_luong(train + "40").status, 0);
  auto files = event_files(run);
  ASSERT_EQ(files.size(), 1u);
  std::map<std::pair<std::string, int64_t>, float> written;
  auto events = read_events(files[0]);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[1].session_status, 1);
  EXPECT_EQ(events[1].step, 1);
  for (const auto& e : events)
    for (const auto& [tag, value] : e.scalars) written[{tag, e.step}] = value;
  EXPECT_EQ(written, scalars_of_metrics(run));
  EXPECT_TRUE(written.count({"train/loss", 40}));
  EXPECT_TRUE(written.count({"valid/ppl", 40}));
  EXPECT_TRUE(written.count({"valid/best_valid_ppl", 40}));
  EXPECT_EQ(scalar_tag("train", "loss"), "train/loss");

  // Resumed for 20 more steps: a second file, starting after the checkpoint's step.
  ASSERT_EQ(run_luong(train + "60 --resume auto").status, 0);
  files = event_files(run);
  ASSERT_EQ(files.size(), 2u);
  events = read_events(files[1]);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[1].session_status, 1);
  EXPECT_EQ(events[1].step, 41);
  for (const auto& e : events)
    for (const auto& [tag, value] : e.scalars) written[{tag, e.step}] = value;
  EXPECT_EQ(written, scalars_of_metrics(run));
  EXPECT_TRUE(written.count({"train/loss", 60}));

  // --overwrite starts over: the earlier run's event files go with its checkpoints.
  const RunResult again = run_luong(train + "20 --overwrite");
  ASSERT_EQ(again.status, 0) << again.output;
  files = event_files(run);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(read_events(files[0])[1].step, 1);

  // Without the key, no event file.
  const std::string plain = fresh_dir("tensorboard_off");
  ASSERT_EQ(
      run_luong(tiny_train_command(plain, data) + " --quiet --set train.max_epochs=0 --set train.max_steps=5").status,
      0);
  EXPECT_TRUE(event_files(plain).empty());
}

}  // namespace
}  // namespace luong::testing
