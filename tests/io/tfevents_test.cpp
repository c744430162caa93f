// TensorBoard event files: CRC-32C's check value, and frames and events that decode to what was written.
#include <gtest/gtest.h>

#include <filesystem>

#include "framework/io/tfevents_writer.h"
#include "tests/support/run_luong.h"
#include "tests/support/tfevents_reader.h"

namespace luong {
namespace {

TEST(TfEvents, Crc32cHasItsCheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C catalogue's check value
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(TfEvents, ScalarsDecodeToWhatWasWritten) {
  const std::string dir = testing::fresh_dir("tfevents");
  EventsFile f;
  f.open(dir, 41);
  f.scalar("train/loss", 3.25, 50, 1700000000.5);
  f.scalar("valid/ppl", 123456.0, 100, 1700000001.0);
  f.scalar("train/step_that_is_large", -1.5, int64_t{1} << 40, 1.0);
  f.flush();
  ASSERT_EQ(std::filesystem::path(f.path()).parent_path(), std::filesystem::path(dir));
  EXPECT_EQ(std::filesystem::path(f.path()).filename().string().rfind("events.out.tfevents.", 0), 0u);
  const auto events = testing::read_events(f.path());
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[1].session_status, 1);  // START at the step the run continues from
  EXPECT_EQ(events[1].step, 41);
  EXPECT_EQ(events[2].step, 50);
  EXPECT_EQ(events[2].wall_time, 1700000000.5);
  ASSERT_EQ(events[2].scalars.size(), 1u);
  EXPECT_EQ(events[2].scalars[0].first, "train/loss");
  EXPECT_EQ(events[2].scalars[0].second, 3.25f);
  EXPECT_EQ(events[3].scalars[0], (std::pair<std::string, float>{"valid/ppl", 123456.0f}));
  EXPECT_EQ(events[4].step, int64_t{1} << 40);
  EXPECT_EQ(events[4].scalars[0].second, -1.5f);
}

}  // namespace
}  // namespace luong
