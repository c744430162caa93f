#include "framework/train/progress.h"

#include <unistd.h>

#include <cmath>

#include "framework/core/error.h"

namespace luong {

ProgressLine::ProgressLine(std::FILE* out)
    : out_(out), tty_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

double ProgressLine::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", static_cast<long>(s / 3600), static_cast<long>(s / 60 % 60),
                static_cast<long>(s % 60));
  return buf;
}

void ProgressLine::update(const ProgressReport& r) {
  const double elapsed = elapsed_s();
  std::string steps = std::to_string(r.step);
  std::string eta;
  if (r.total_steps > 0) {
    steps = str(steps, "/", r.total_steps);
    // The rate since this process's first report: a resumed run starts at step N, not 0, and the steps
    // before it were not run by this process.
    if (first_step_ < 0) first_step_ = r.step, first_elapsed_ = elapsed;
    if (r.step > first_step_) {
      const double per_step = (elapsed - first_elapsed_) / static_cast<double>(r.step - first_step_);
      eta = str(" ETA ", format_duration(per_step * static_cast<double>(r.total_steps - r.step)));
    }
  }
  const std::string line = str("epoch ", r.epoch, " step ", steps, " | loss ", r.loss, " ppl ", std::exp(r.loss),
                               " | lr ", r.lr, " | |g| ", r.grad_norm, " | ", static_cast<int64_t>(r.tokens_per_s),
                               " tok/s | ", format_duration(elapsed), eta);
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressLine::status(const std::string& text) {
  if (!tty_) return;
  std::fprintf(out_, "\r\033[K%s", text.c_str());
  line_open_ = true;
  std::fflush(out_);
}

void ProgressLine::message(const std::string& text) {
  if (line_open_) std::fprintf(out_, "\r\033[K");
  std::fprintf(out_, "%s\n", text.c_str());
  line_open_ = false;
  std::fflush(out_);
}

}  // namespace luong
