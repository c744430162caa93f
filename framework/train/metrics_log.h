// metrics.jsonl: one JSON object per line (per log interval and per validation), flushed line by line so
// scripts and plots can follow a running job; optionally mirrored as TensorBoard scalars (train.tensorboard):
// each numeric field of a record as "<type>/<field>" at the record's step ("train/loss", "valid/ppl").
#pragma once
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "framework/io/tfevents_writer.h"

namespace luong {

// A record field's TensorBoard tag: "<type>/<field>", the field's own "<type>_" prefix dropped ("valid_ppl" of a
// "valid" record is "valid/ppl"; its "best_valid_ppl" stays "valid/best_valid_ppl").
std::string scalar_tag(const std::string& type, const std::string& field);

class MetricsLog {
 public:
  MetricsLog() = default;
  // Opens `path` for appending. With keep_up_to_step >= 0 (a resumed run), first drops the lines whose
  // "step" is greater: they describe steps the resumed run will redo. "valid" records are kept up to
  // keep_valid_up_to_step only (when given): a checkpoint written just before its step's validation is
  // followed by that validation again, which must not be recorded twice.
  // With `tensorboard_dir`, an event file there gets the records too, starting at step keep_up_to_step + 1.
  void open(const std::string& path, int64_t keep_up_to_step = -1, int64_t keep_valid_up_to_step = -1,
            const std::string& tensorboard_dir = "");
  void write(const nlohmann::json& record);
  bool is_open() const { return out_.is_open(); }

 private:
  std::ofstream out_;
  EventsFile events_;
};

}  // namespace luong
