#include "framework/sweep/results_table.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "framework/sweep/sweep_runner.h"
#include "framework/train/progress.h"

namespace luong::sweep {
namespace {

int status_rank(const TrialResult& r, const std::string& metric) {
  switch (r.status) {
    case TrialStatus::ok:
      return r.metric(metric) ? 0 : 2;
    case TrialStatus::pruned:
      return 1;  // behind the median when stopped: below every trial that finished
    case TrialStatus::interrupted:
    case TrialStatus::running:
    case TrialStatus::waiting:
      return 3;
    case TrialStatus::pending:
      return 4;
    case TrialStatus::failed:
      return 5;
  }
  return 6;
}

// Shortest text that reads back as the same double.
std::string exact(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// One line for the table cell. A crash's error is "luong train: exit status 1 (...); <reason>; last lines of
// LOG:" and then the log tail: the cell shows the reason, a luong "error:" line or (under mpirun, whose own
// abort banner ends the log) an "aborting the job:" line, from the header or the tail, not the header.
std::string error_summary(const std::string& error, size_t max_len) {
  auto reason_in = [](const std::string& l) -> std::string {
    if (l.find("error:") == std::string::npos && l.find("aborting the job:") == std::string::npos) return "";
    const size_t at = l.find("luong:");
    std::string r = at == std::string::npos ? l : l.substr(at);
    if (const size_t cut = r.find("; last lines of "); cut != std::string::npos) r.resize(cut);
    return trim(r);
  };
  std::string line = error.substr(0, error.find('\n'));
  if (const size_t cut = line.find("; last lines of "); cut != std::string::npos) line.resize(cut);
  line = trim(line);
  for (size_t start = 0; start < error.size();) {
    size_t end = error.find('\n', start);
    if (end == std::string::npos) end = error.size();
    if (std::string r = reason_in(error.substr(start, end - start)); !r.empty()) line = r;
    start = end + 1;
  }
  if (line.size() <= max_len) return line;
  size_t cut = max_len - 3;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return line.substr(0, cut) + "...";
}

}  // namespace

std::vector<TrialResult> rank_results(std::vector<TrialResult> results, const std::string& metric, const std::string& mode) {
  const bool maximize = mode == "max";
  std::stable_sort(results.begin(), results.end(), [&](const TrialResult& a, const TrialResult& b) {
    const int ra = status_rank(a, metric), rb = status_rank(b, metric);
    if (ra != rb) return ra < rb;
    // Within a group (interrupted trials have partial values), measured before unmeasured, then by value.
    const std::optional<double> va = a.metric(metric), vb = b.metric(metric);
    if (!va || !vb) return va.has_value() && !vb.has_value();
    return maximize ? *va > *vb : *va < *vb;
  });
  return results;
}

ResultsTable make_table(const std::vector<TrialResult>& ranked, const std::vector<std::string>& keys, bool evaluated,
                        bool precise) {
  ResultsTable t;
  t.header = {"rank", "trial"};
  t.header.insert(t.header.end(), keys.begin(), keys.end());
  t.header.push_back("valid_ppl");
  // Validation scores when any trial computed them (train.valid_bleu, or a sweep ranked by them); chrF next to
  // BLEU when the evaluations recorded it (results of earlier versions did not).
  bool with_valid_bleu = false, with_valid_chrf = false, with_chrf = false, with_p = false;
  for (const auto& r : ranked) {
    with_p = with_p || r.p_vs_best.has_value();
    with_valid_bleu = with_valid_bleu || r.valid_bleu.has_value();
    with_valid_chrf = with_valid_chrf || r.valid_chrf.has_value();
    with_chrf = with_chrf || (evaluated && r.chrf.has_value());
  }
  if (with_valid_bleu) t.header.push_back("valid_bleu");
  if (with_valid_chrf) t.header.push_back("valid_chrf");
  if (evaluated) t.header.push_back("bleu");
  if (with_chrf) t.header.push_back("chrf");
  if (with_p) t.header.push_back("p_vs_best");
  t.header.insert(t.header.end(), {"tokens_per_s", "wall_s", "steps", "status", "error"});
  auto opt = [&](const std::optional<double>& v, int digits) {
    return !v ? std::string() : precise ? exact(*v) : fixed(*v, digits);
  };
  int rank = 0;
  for (const auto& r : ranked) {
    std::vector<std::string> row = {std::to_string(++rank), r.name};
    for (const auto& k : keys) {
      std::string v;
      for (const auto& a : r.varied)
        if (a.key == k) v = precise ? a.value.yaml : a.value.label;
      row.push_back(v);
    }
    row.push_back(opt(r.valid_ppl, 3));
    if (with_valid_bleu) row.push_back(opt(r.valid_bleu, 2));
    if (with_valid_chrf) row.push_back(opt(r.valid_chrf, 2));
    if (evaluated) row.push_back(opt(r.bleu, 2));
    if (with_chrf) row.push_back(opt(r.chrf, 2));
    if (with_p) row.push_back(rank == 1 ? "best" : opt(r.p_vs_best, 4));
    const bool ran = r.status == TrialStatus::ok;
    const bool partly = r.status == TrialStatus::interrupted || r.status == TrialStatus::pruned ||
                        r.status == TrialStatus::running || r.status == TrialStatus::waiting;
    // A trial that has not finished (or was pruned) shows the rate of its partial run, when it was measured.
    const bool rate = ran || (partly && r.tokens_per_s > 0.0);
    row.push_back(!rate ? "" : precise ? exact(r.tokens_per_s) : fixed(r.tokens_per_s, 0));
    row.push_back(r.wall_s <= 0.0 ? "" : precise ? fixed(r.wall_s, 3) : format_duration(r.wall_s));
    row.push_back(ran || partly ? std::to_string(r.steps) : "");
    row.push_back(status_name(r.status));
    // A pruned trial has no error: the cell says why it was stopped.
    const std::string& note = r.status == TrialStatus::pruned ? r.stop_reason : r.error;
    row.push_back(precise ? note : error_summary(note, 160));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string to_csv(const ResultsTable& t) {
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out.append(i ? "," : "").append(cell(cells[i]));
    out += "\n";
  };
  line(t.header);
  for (const auto& r : t.rows) line(r);
  return out;
}

std::string to_markdown(const ResultsTable& t) {
  auto cell = [](const std::string& s) {
    std::string e;
    // A '|' would end the cell and a line break the row; the CSV keeps the value exactly.
    for (char c : s) e += c == '|' ? std::string("\\|") : c == '\n' || c == '\r' ? std::string(" ") : std::string(1, c);
    return e;
  };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    out += "|";
    for (const auto& c : cells) out.append(" ").append(cell(c)).append(" |");
    out += "\n";
  };
  line(t.header);
  out += "|";
  for (size_t i = 0; i < t.header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : t.rows) line(r);
  return out;
}

nlohmann::json results_json(const std::vector<TrialResult>& ranked, const std::string& out_dir) {
  nlohmann::json a = nlohmann::json::array();
  int rank = 0;
  for (const auto& r : ranked) {
    nlohmann::json j = to_json(r);
    j["rank"] = ++rank;
    j["run_dir"] = trial_dir(out_dir, r.name);
    a.push_back(std::move(j));
  }
  return a;
}

}  // namespace luong::sweep
