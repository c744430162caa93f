// One metric's sufficient statistics per sentence, as the rows sacreBLEU's significance tests resample, and the
// two ways it scores a sum of rows: from exact integer sums (a corpus, a randomization trial), and from the
// float32 sums of its numpy arrays (a bootstrap resample), where BLEU's precisions and all of chrF's arithmetic
// are rounded to float32 as numpy 2 rounds them (the resampled chrF scores stay float32).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace luong::significance {

enum class Metric { kBleu, kChrf };

struct MetricRows {
  Metric metric = Metric::kBleu;
  int word_order = 0;  // chrF's (2: chrF++)
  int nrefs = 1;       // references per sentence
  size_t columns = 0;
  std::vector<int64_t> rows;  // sentence after sentence, `columns` each, in sacreBLEU's order

  size_t sentences() const { return columns ? rows.size() / columns : 0; }
  std::span<const int64_t> row(size_t i) const { return {rows.data() + i * columns, columns}; }
  std::string name() const;       // "BLEU", "chrF2", "chrF2++"
  std::string signature() const;  // the metric's signature (nrefs, case, ...), without a test's fields
  // Whether bootstrap-resampled scores (and their means and differences) are float32 in sacreBLEU.
  bool float32_resamples() const { return metric == Metric::kChrf; }
};

// BLEU rows: hyp_len, ref_len, matches of orders 1-4, n-grams of orders 1-4.
MetricRows bleu_rows(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& reference_sets);
// chrF rows: hypothesis, reference and matching n-grams of each order (characters 1-6, then words).
MetricRows chrf_rows(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& reference_sets, int word_order);

// The score of summed rows, computed as sacreBLEU computes a corpus score.
double score_exact(const MetricRows& m, std::span<const int64_t> sums);
// The corpus score: the score of all rows' sums.
double corpus_score(const MetricRows& m);
// The column sums of all rows.
std::vector<int64_t> column_sums(const MetricRows& m);
// The score of float32 sums, computed as sacreBLEU computes a bootstrap resample's score.
double score_resampled(const MetricRows& m, std::span<const float> sums);

}  // namespace luong::significance
