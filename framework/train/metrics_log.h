// metrics.jsonl: one JSON object per line (per log interval and per validation), flushed line by line so
// scripts and plots can follow a running job.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace luong {

class MetricsLog {
 public:
  MetricsLog() = default;
  // Opens `path` for appending. With keep_up_to_step >= 0 (a resumed run), first drops the lines whose
  // "step" is greater: they describe steps the resumed run will redo. "valid" records are kept up to
  // keep_valid_up_to_step only (when given): a checkpoint written just before its step's validation is
  // followed by that validation again, which must not be recorded twice.
  void open(const std::string& path, int64_t keep_up_to_step = -1, int64_t keep_valid_up_to_step = -1);
  void write(const nlohmann::json& record);
  bool is_open() const { return out_.is_open(); }

 private:
  std::ofstream out_;
};

}  // namespace luong
