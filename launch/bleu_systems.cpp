#include "launch/bleu_systems.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/significance/paired_tests.h"

namespace luong::cli {

significance::MetricRows rows_of(significance::Metric m, const ScoredSystem& s,
                                 const std::vector<std::vector<std::string>>& refs, int chrf_word_order) {
  return m == significance::Metric::kBleu ? significance::bleu_rows(s.lines, refs)
                                          : significance::chrf_rows(s.lines, refs, chrf_word_order);
}

namespace {

// Terminal columns of UTF-8 text (one per code point: the table's text has no wide characters but in names).
size_t columns_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A plain table: the first column right-aligned (system names), the others left-aligned, two spaces apart.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], columns_of(row[c]));
  for (const auto& row : rows) {
    std::string line = std::string(widths[0] - columns_of(row[0]), ' ') + row[0];
    for (size_t c = 1; c < row.size(); ++c)
      line += "  " + row[c] + (c + 1 < row.size() ? std::string(widths[c] - columns_of(row[c]), ' ') : "");
    std::cout << line << "\n";
  }
}

}  // namespace

void print_systems(const SystemsScoring& o, const std::vector<ScoredSystem>& systems) {
  const std::vector<significance::Metric>& metrics = o.metrics;
  std::vector<std::vector<std::string>> table{{"System"}};
  std::vector<std::string> signatures;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (significance::Metric m : metrics) {
    const significance::MetricRows probe = rows_of(m, systems[0], o.refs, o.chrf_word_order);
    table[0].push_back(probe.name());
    signatures.push_back(probe.name() + "|" + probe.signature());
  }
  for (const ScoredSystem& s : systems) {
    std::vector<std::string> row{s.name};
    nlohmann::ordered_json j;
    j["system"] = s.name;
    for (significance::Metric m : metrics) {
      const significance::MetricRows rows = rows_of(m, s, o.refs, o.chrf_word_order);
      const std::string score = bleu::fixed_decimals(significance::corpus_score(rows), o.width);
      row.push_back(score);
      j[rows.name()] = score;
    }
    table.push_back(row);
    list.push_back(j);
  }
  if (o.json) {
    std::cout << list.dump(4, ' ', false) << "\n";
    return;
  }
  print_table(table);
  std::cout << "\n";
  for (const std::string& sig : signatures) std::cout << " - " << sig << "\n";
}

void print_paired_test(const SystemsScoring& o, std::vector<ScoredSystem> systems, const PairedTestOptions& test) {
  const int draws = test.draws;
  const std::string test_fields = str(test.bootstrap ? "bs:" : "ar:", draws, "|seed:", test.seed);
  const std::string baseline = systems[0].name;
  systems[0].name = "Baseline: " + systems[0].name;
  std::vector<std::vector<std::string>> table{{"System"}};
  for (const ScoredSystem& s : systems) table.push_back({s.name});
  std::vector<std::string> signatures;
  std::vector<nlohmann::ordered_json> objects(systems.size());
  for (size_t s = 0; s < systems.size(); ++s) objects[s]["system"] = systems[s].name;
  for (significance::Metric m : o.metrics) {
    std::vector<significance::MetricRows> rows;
    for (const ScoredSystem& s : systems) rows.push_back(rows_of(m, s, o.refs, o.chrf_word_order));
    const std::string name = rows[0].name();
    table[0].push_back(test.bootstrap ? name + " (\u03bc \u00b1 95% CI)" : name);
    signatures.push_back(name + "|" + bleu::with_test_fields(rows[0].signature(), test_fields));
    const std::vector<significance::SystemResult> results =
        test.bootstrap ? significance::paired_bootstrap(rows, draws, test.seed)
                       : significance::paired_randomization(rows, draws, test.seed);
    for (size_t s = 0; s < systems.size(); ++s) {
      const significance::SystemResult& r = results[s];
      std::string cell = bleu::fixed_decimals(r.score, o.width);
      if (r.estimate)
        cell += " (" + bleu::fixed_decimals(r.estimate->mean, o.width) + " \u00b1 " +
                bleu::fixed_decimals(r.estimate->ci, o.width) + ")";
      if (r.p_value) cell += " (p = " + bleu::fixed_decimals(*r.p_value, 4) + ")" + (*r.p_value <= 0.05 ? "*" : "");
      table[s + 1].push_back(cell);
      // sacrebleu's JSON: the result's fields, null where a test gives none.
      nlohmann::ordered_json j;
      j["score"] = r.score;
      j["p_value"] = r.p_value ? nlohmann::ordered_json(*r.p_value) : nlohmann::ordered_json(nullptr);
      j["mean"] = r.estimate ? nlohmann::ordered_json(r.estimate->mean) : nlohmann::ordered_json(nullptr);
      j["ci"] = r.estimate ? nlohmann::ordered_json(r.estimate->ci) : nlohmann::ordered_json(nullptr);
      objects[s][name] = j;
    }
  }
  if (o.json) {
    std::cout << nlohmann::ordered_json(objects).dump(4, ' ', false) << "\n";
    return;
  }
  print_table(table);
  std::cout << "\n"
            << (test.bootstrap ? str("Paired bootstrap resampling test, ", draws, " resamples")
                               : str("Paired approximate randomization test, ", draws, " trials"))
            << ": each system against the baseline, " << baseline
            << (test.bootstrap ? " (in brackets: the\nbootstrap mean and 95% confidence interval of each score)" : "")
            << ". p is roughly the probability that a\ndifference at least this large arises by chance if the "
               "system and the baseline come from the same\nprocess; * marks p <= 0.05, a significant difference "
               "(the scores say which system is better).\n\n";
  for (const std::string& sig : signatures) std::cout << " - " << sig << "\n";
}

}  // namespace luong::cli
