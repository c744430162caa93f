// TensorBoard event files, so `tensorboard --logdir RUN_DIR` follows a training run: TFRecord framing (length,
// masked CRC-32C of the length, data, masked CRC-32C of the data) around Event protocol buffers, encoded by hand
// (wall_time = 1, step = 2, file_version = 3, summary = 5 holding Value{tag = 1, simple_value = 2}, session_log = 7
// holding status = 1), the only fields scalars need.
//
//   EventsFile events;
//   events.open(run_dir, /*start_step=*/1);
//   events.scalar("train/loss", 3.2, /*step=*/50, wall_time_seconds());
#pragma once
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace luong {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord frames use it.
uint32_t crc32c(const void* data, size_t n);
// TFRecord's masked form of a CRC (rotated and offset, so CRCs of data holding CRCs stay well spread).
uint32_t masked_crc32c(const void* data, size_t n);
// Seconds since the epoch, with fractions (an Event's wall_time).
double wall_time_seconds();

class EventsFile {
 public:
  // Creates <dir>/events.out.tfevents.<seconds>.<host>.<pid>.luong and writes the file-version event and a
  // session-start event at `start_step`: TensorBoard then drops the points of steps >= start_step that earlier
  // files of the directory hold (a resumed run logs those steps again).
  void open(const std::string& dir, int64_t start_step);
  bool is_open() const { return out_.is_open(); }
  const std::string& path() const { return path_; }
  void scalar(const std::string& tag, double value, int64_t step, double wall_time);
  // Flushes what was written (after each batch of scalars, so a running job can be followed).
  void flush();

 private:
  void record(const std::string& event);
  std::ofstream out_;
  std::string path_;
};

}  // namespace luong
