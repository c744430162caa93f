// The outputs of `luong bleu -i A B ...` for several systems: their scores side by side (sacrebleu's table and JSON),
// or a paired significance test of each against the first (sacrebleu's --paired-bs / --paired-ar: the same JSON;
// the text as a plain table with the test and signatures under it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/nmt/significance/metric_rows.h"

namespace luong::cli {

// One system's output: its name (the file, or "standard input") and its lines.
struct ScoredSystem {
  std::string name;
  std::vector<std::string> lines;
};

// What each system is scored with.
struct SystemsScoring {
  std::vector<significance::Metric> metrics;   // in output order
  std::vector<std::vector<std::string>> refs;  // reference sets, each a line per hypothesis
  int chrf_word_order = 0;
  int width = 1;  // decimals of the scores
  bool json = false;
};

struct PairedTestOptions {
  bool bootstrap = true;  // false: approximate randomization
  int draws = 0;          // resamples or trials
  uint64_t seed = 0;
};

significance::MetricRows rows_of(significance::Metric m, const ScoredSystem& s,
                                 const std::vector<std::vector<std::string>>& refs, int chrf_word_order);
// Each system's scores, no test.
void print_systems(const SystemsScoring& how, const std::vector<ScoredSystem>& systems);
// The test of systems[1..] against systems[0] (the baseline).
void print_paired_test(const SystemsScoring& how, std::vector<ScoredSystem> systems, const PairedTestOptions& test);

}  // namespace luong::cli
