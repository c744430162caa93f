#include "framework/sweep/trial_result.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/core/error.h"
#include "framework/io/json_text.h"

namespace luong::sweep {
namespace {

using nlohmann::json;

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> optional_from(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

// Removes the terminal control sequences of a progress line ("\r\033[K") from a log line.
std::string strip_controls(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\r') {
      out.clear();  // a carriage return rewrites the line: keep only what follows
    } else if (line[i] == '\033') {
      while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
    } else {
      out += line[i];
    }
  }
  return out;
}

template <class Fn>
void for_each_record(const std::string& metrics_path, Fn&& fn) {
  std::ifstream in(metrics_path);
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) fn(j);
  }
}

}  // namespace

const char* status_name(TrialStatus s) {
  switch (s) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::failed: return "failed";
    case TrialStatus::interrupted: return "interrupted";
    case TrialStatus::pending: return "pending";
    case TrialStatus::pruned:
      return "pruned";
    case TrialStatus::running:
      return "running";
    case TrialStatus::waiting:
      return "waiting";
  }
  return "?";
}

std::optional<double> TrialResult::metric(const std::string& name) const {
  if (name == "valid_ppl") return valid_ppl;
  if (name == "bleu") return bleu;
  if (name == "chrf") return chrf;
  if (name == "valid_bleu") return valid_bleu;
  if (name == "valid_chrf") return valid_chrf;
  if (name == "tokens_per_s") return status == TrialStatus::ok ? std::optional<double>(tokens_per_s) : std::nullopt;
  if (name == "wall_s") return status == TrialStatus::ok ? std::optional<double>(wall_s) : std::nullopt;
  LUONG_FAIL("unknown sweep metric '", name, "'");
}

json to_json(const TrialResult& r) {
  json overrides = json::object();
  for (const auto& a : r.varied) overrides[a.key] = a.value.label;
  return json{{"name", r.name},
              {"status", status_name(r.status)},
              {"overrides", overrides},
              {"override_yaml",
               [&] {
                 json o = json::object();
                 for (const auto& a : r.varied) o[a.key] = a.value.yaml;
                 return o;
               }()},
              {"sets", r.sets},
              {"valid_ppl", optional_json(r.valid_ppl)},
              {"bleu", optional_json(r.bleu)},
              {"chrf", optional_json(r.chrf)},
              {"valid_bleu", optional_json(r.valid_bleu)},
              {"valid_chrf", optional_json(r.valid_chrf)},
              {"eval_ref", r.eval_ref},
              {"eval_chrf_word_order", r.eval_chrf_word_order},
              {"p_vs_best", optional_json(r.p_vs_best)},
              // null, not 0, for what was never measured (a trial that failed at start, or never ran)
              {"tokens_per_s", r.tokens_per_s > 0 ? json(r.tokens_per_s) : json(nullptr)},
              {"wall_s", r.wall_s > 0 ? json(r.wall_s) : json(nullptr)},
              {"steps", r.steps > 0 || r.status == TrialStatus::ok ? json(r.steps) : json(nullptr)},
              {"attempts", r.attempts},
              {"stop_reason", r.stop_reason},
              {"resumed_from", r.resumed_from},
              {"error", r.error}};
}

TrialResult result_from_json(const json& j) {
  TrialResult r;
  r.name = j.at("name").get<std::string>();
  const std::string status = j.at("status").get<std::string>();
  if (status == "ok") r.status = TrialStatus::ok;
  else if (status == "failed") r.status = TrialStatus::failed;
  else if (status == "pruned")
    r.status = TrialStatus::pruned;
  else
    LUONG_FAIL("status '", status, "' is not a finished trial's (ok, failed or pruned)");
  const json& yaml = j.at("override_yaml");
  for (const auto& [k, v] : j.at("overrides").items())
    r.varied.push_back({k, {yaml.at(k).get<std::string>(), v.get<std::string>()}});
  r.sets = j.at("sets").get<std::vector<std::string>>();
  r.valid_ppl = optional_from(j, "valid_ppl");
  r.bleu = optional_from(j, "bleu");
  r.chrf = optional_from(j, "chrf");  // absent in results written before chrF was recorded
  r.valid_bleu = optional_from(j, "valid_bleu");
  r.valid_chrf = optional_from(j, "valid_chrf");
  r.eval_ref = j.value("eval_ref", "");
  r.eval_chrf_word_order = j.value("eval_chrf_word_order", 0);  // p_vs_best is the report's, worked out again each time
  r.tokens_per_s = number_or(j, "tokens_per_s", 0.0);
  r.wall_s = number_or(j, "wall_s", 0.0);
  r.steps = number_or(j, "steps", int64_t{0});
  r.attempts = j.value("attempts", int64_t{0});
  r.stop_reason = j.value("stop_reason", "");
  r.resumed_from = j.value("resumed_from", "");
  r.error = j.value("error", "");
  return r;
}

void write_result(const std::string& trial_dir, const TrialResult& r) {
  const std::string path = trial_dir + "/result.json", tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << json_text(to_json(r), 2) << "\n";
    if (!out.flush()) LUONG_FAIL("cannot write ", tmp);
  }
  std::filesystem::rename(tmp, path);
}

std::optional<TrialResult> read_result(const std::string& trial_dir) {
  const std::string path = trial_dir + "/result.json";
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return result_from_json(json::parse(in));
  } catch (const std::exception& e) {
    LUONG_FAIL("trial result ", path, " is corrupt (", e.what(), "); delete it to rerun the trial");
  }
}

std::vector<std::pair<int64_t, double>> valid_curve(const std::string& metrics_path, const std::string& key) {
  std::vector<std::pair<int64_t, double>> points;
  for_each_record(metrics_path, [&](const json& j) {
    if (j.value("type", "") == "valid" && j.contains(key) && j[key].is_number() && j.contains("step"))
      points.emplace_back(j["step"].get<int64_t>(), j[key].get<double>());
  });
  return points;
}

std::optional<double> best_valid_ppl(const std::string& metrics_path) {
  std::optional<double> best;
  for (const auto& [step, ppl] : valid_curve(metrics_path))
    if (!best || ppl < *best) best = ppl;
  return best;
}

std::optional<double> best_valid_score(const std::string& metrics_path, const std::string& key) {
  std::optional<double> best;
  for_each_record(metrics_path, [&](const json& j) {
    if (j.value("type", "") == "valid" && j.contains(key) && j[key].is_number())
      if (const double b = j[key].get<double>(); !best || b > *best) best = b;
  });
  return best;
}

double mean_train_tokens_per_s(const std::string& metrics_path) {
  double sum = 0.0;
  int64_t n = 0;
  for_each_record(metrics_path, [&](const json& j) {
    if (j.value("type", "") == "train" && j.contains("tokens_per_s")) sum += j["tokens_per_s"].get<double>(), ++n;
  });
  return n ? sum / static_cast<double>(n) : 0.0;
}

int64_t last_logged_step(const std::string& metrics_path) {
  int64_t last = 0;
  for_each_record(metrics_path, [&](const json& j) {
    if (j.contains("step") && j["step"].is_number_integer()) last = std::max(last, j["step"].get<int64_t>());
  });
  return last;
}

std::optional<json> last_json_line(const std::string& log_path, const std::string& required_key, std::uintmax_t from) {
  std::ifstream in(log_path);
  if (from > 0) in.seekg(static_cast<std::streamoff>(from));
  std::optional<json> last;
  for (std::string line; std::getline(in, line);) {
    const std::string clean = strip_controls(line);
    const size_t brace = clean.find('{');
    if (brace == std::string::npos) continue;
    json j = json::parse(clean.substr(brace), nullptr, false);
    if (j.is_object() && j.contains(required_key)) last = std::move(j);
  }
  return last;
}

std::string log_tail(const std::string& path, size_t n, std::uintmax_t from) {
  std::ifstream in(path);
  if (from > 0) in.seekg(static_cast<std::streamoff>(from));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    std::string clean = strip_controls(line);
    if (clean.find_first_not_of(" \t") == std::string::npos) continue;
    lines.push_back(std::move(clean));
    if (lines.size() > n) lines.erase(lines.begin());
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

}  // namespace luong::sweep
