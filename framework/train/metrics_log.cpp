#include "framework/train/metrics_log.h"

#include <filesystem>
#include <sstream>
#include <vector>

#include "framework/core/error.h"
#include "framework/io/json_text.h"

namespace luong {

void MetricsLog::open(const std::string& path, int64_t keep_up_to_step, int64_t keep_valid_up_to_step) {
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
}

void MetricsLog::write(const nlohmann::json& record) {
  if (!out_.is_open()) return;
  out_ << json_text(record) << "\n";
  out_.flush();
}

}  // namespace luong
