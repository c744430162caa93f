// The terminal progress line: updated in place on a TTY, one plain line per report when redirected.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace luong {

struct ProgressReport {
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t total_steps = 0;  // 0 = unknown (no ETA)
  double loss = 0.0;        // per token
  double lr = 0.0;
  double tokens_per_s = 0.0;
  double grad_norm = 0.0;
};

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out = stderr);
  void update(const ProgressReport& r);
  // Prints a message on its own line (validation results, warnings) without garbling the progress line.
  void message(const std::string& text);
  // On a terminal, `text` in place of the progress line until the next update or message: what the run is
  // doing between steps ("validating step 4000 ..."), so a long validation does not look like a hang. Not
  // written when the output is not a terminal (a log would keep a line of it each time).
  void status(const std::string& text);
  double elapsed_s() const;

 private:
  std::FILE* out_;
  bool tty_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_;
  int64_t first_step_ = -1;  // step and time of the first report, for the ETA's rate
  double first_elapsed_ = 0.0;
};

// "1:02:03" for 3723 seconds.
std::string format_duration(double seconds);

}  // namespace luong
