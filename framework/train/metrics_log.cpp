#include "framework/train/metrics_log.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <vector>

#include "framework/core/error.h"
#include "framework/io/json_text.h"

namespace luong {

std::string scalar_tag(const std::string& type, const std::string& field) {
  const std::string prefix = type + "_";
  return type + "/" + (field.rfind(prefix, 0) == 0 ? field.substr(prefix.size()) : field);
}

void MetricsLog::open(const std::string& path, int64_t keep_up_to_step, int64_t keep_valid_up_to_step,
                      const std::string& tensorboard_dir) {
  if (keep_up_to_step >= 0 && std::filesystem::exists(path)) {
    std::ifstream in(path);
    std::vector<std::string> kept;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const auto rec = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (rec.is_discarded()) continue;  // a line cut by a crash
      if (rec.contains("step") && rec["step"].get<int64_t>() > keep_up_to_step) continue;
      if (keep_valid_up_to_step >= 0 && rec.value("type", "") == "valid" && rec.contains("step") &&
          rec["step"].get<int64_t>() > keep_valid_up_to_step)
        continue;
      kept.push_back(line);
    }
    in.close();
    std::ofstream rewrite(path, std::ios::trunc);
    for (const auto& l : kept) rewrite << l << "\n";
  }
  out_.open(path, std::ios::app);
  LUONG_CHECK(out_.is_open(), "cannot open metrics log ", path, " for writing");
  if (!tensorboard_dir.empty()) events_.open(tensorboard_dir, std::max<int64_t>(keep_up_to_step, 0) + 1);
}

void MetricsLog::write(const nlohmann::json& record) {
  if (!out_.is_open()) return;
  out_ << json_text(record) << "\n";
  out_.flush();
  if (!events_.is_open() || !record.contains("step")) return;
  const std::string type = record.value("type", "metrics");
  const int64_t step = record["step"].get<int64_t>();
  const double now = wall_time_seconds();
  for (const auto& [key, value] : record.items())
    if (key != "step" && value.is_number()) events_.scalar(scalar_tag(type, key), value.get<double>(), step, now);
  events_.flush();
}

}  // namespace luong
