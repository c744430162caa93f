#include "models/nmt/significance/paired_tests.h"

#include <algorithm>
#include <cmath>

#include "framework/core/error.h"
#include "models/nmt/significance/numpy_generator.h"
#include "models/nmt/significance/numpy_sums.h"

namespace luong::significance {
namespace {

// A system whose every sentence has the baseline's statistics: every resample or trial differs by exactly the real
// difference, 0. sacreBLEU's strict `>` counts none of these ties and reports p = 1 / (n + 1), "significant",
// for two copies of one output; the p-value of a statistic that always equals the observed one is 1.
bool identical(const MetricRows& a, const MetricRows& b) { return a.rows == b.rows; }

void check_systems(const std::vector<MetricRows>& systems, int draws, const char* what) {
  LUONG_CHECK(systems.size() >= 2, what, ": a baseline and at least one system are needed");
  LUONG_CHECK(draws >= 1, what, ": ", draws, " draws; at least 1 is needed");
  for (const MetricRows& s : systems) {
    LUONG_CHECK(
        s.metric == systems[0].metric && s.word_order == systems[0].word_order && s.columns == systems[0].columns, what,
        ": the systems' statistics are of different metrics");
    LUONG_CHECK(s.sentences() == systems[0].sentences() && s.sentences() > 0, what, ": the systems have ",
                systems[0].sentences(), " and ", s.sentences(), " sentences");
  }
}

// The scores of `resamples` bootstrap resamples of each system, all drawn with the same indices (sacreBLEU seeds
// a new generator for each system with the same seed): rng.choice(n, size=(resamples, n)) row by row, each row's
// statistics summed in float32 in draw order, as numpy's sum(0) over the gathered rows adds them.
std::vector<std::vector<double>> resample_scores(const std::vector<const MetricRows*>& systems, int resamples,
                                                 uint64_t seed) {
  const size_t n = systems[0]->sentences(), columns = systems[0]->columns;
  NumpyGenerator rng(seed);
  std::vector<int64_t> picks(n);
  std::vector<float> sums(columns);
  std::vector<std::vector<double>> scores(systems.size(), std::vector<double>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (size_t i = 0; i < n; ++i) picks[i] = rng.below(static_cast<int64_t>(n));
    for (size_t s = 0; s < systems.size(); ++s) {
      std::fill(sums.begin(), sums.end(), 0.0f);
      for (int64_t i : picks) {
        const std::span<const int64_t> row = systems[s]->row(static_cast<size_t>(i));
        for (size_t c = 0; c < columns; ++c) sums[c] += static_cast<float>(row[c]);
      }
      scores[s][r] = score_resampled(*systems[s], sums);
    }
  }
  return scores;
}

// significance.estimate_ci: the sorted scores' mean in their numpy type, and half the spread between the
// entries n/40 from either end.
template <typename T>
Estimate numpy_estimate(const std::vector<double>& scores) {
  std::vector<T> sorted(scores.begin(), scores.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t lower = sorted.size() / 40, upper = sorted.size() - lower - 1;
  const T half_width = T(0.5) * (sorted[upper] - sorted[lower]);
  return {static_cast<double>(numpy_mean(sorted.data(), sorted.size())), static_cast<double>(half_width)};
}

Estimate numpy_estimate(const MetricRows& m, const std::vector<double>& scores) {
  return m.float32_resamples() ? numpy_estimate<float>(scores) : numpy_estimate<double>(scores);
}

// _paired_bs_test's p-value: the resamples' absolute differences centred on their mean, counted where they
// exceed the real difference (which numpy compares in the array's type).
template <typename T>
double bootstrap_p_value(const std::vector<double>& system, const std::vector<double>& baseline, double real) {
  const size_t n = system.size();
  std::vector<T> diffs(n);
  for (size_t i = 0; i < n; ++i) diffs[i] = std::abs(static_cast<T>(system[i]) - static_cast<T>(baseline[i]));
  const T mean = numpy_mean(diffs.data(), n);
  size_t above = 0;
  for (T d : diffs) above += (d - mean) > static_cast<T>(real);
  return (static_cast<double>(above) + 1) / (static_cast<double>(n) + 1);
}

}  // namespace

Estimate bootstrap_confidence(const MetricRows& system, int resamples, uint64_t seed) {
  LUONG_CHECK(resamples >= 1, "confidence: ", resamples, " resamples; at least 1 is needed");
  LUONG_CHECK(system.sentences() > 0, "confidence: no sentences to resample");
  std::vector<double> scores = resample_scores({&system}, resamples, seed)[0];
  std::sort(scores.begin(), scores.end());
  const size_t lower = scores.size() / 40, upper = scores.size() - lower - 1;
  // Score.estimate_ci: statistics.mean, the exact mean of the scores rounded once (a long double sum is exact for
  // scores of one magnitude), and the half-width in the scores' type.
  long double total = 0;
  for (double s : scores) total += s;
  const double mean = static_cast<double>(total / static_cast<long double>(scores.size()));
  if (system.float32_resamples())
    return {static_cast<double>(static_cast<float>(mean)),
            static_cast<double>(0.5f * (static_cast<float>(scores[upper]) - static_cast<float>(scores[lower])))};
  return {mean, 0.5 * (scores[upper] - scores[lower])};
}

std::vector<SystemResult> paired_bootstrap(const std::vector<MetricRows>& systems, int resamples, uint64_t seed) {
  check_systems(systems, resamples, "paired bootstrap");
  std::vector<const MetricRows*> all;
  for (const MetricRows& s : systems) all.push_back(&s);
  const std::vector<std::vector<double>> scores = resample_scores(all, resamples, seed);
  std::vector<SystemResult> results(systems.size());
  for (size_t s = 0; s < systems.size(); ++s) {
    results[s].score = corpus_score(systems[s]);
    results[s].estimate = numpy_estimate(systems[s], scores[s]);
    if (s == 0) continue;
    if (identical(systems[s], systems[0])) {
      results[s].p_value = 1.0;
      continue;
    }
    const double real = std::abs(results[0].score - results[s].score);
    results[s].p_value = systems[s].float32_resamples() ? bootstrap_p_value<float>(scores[s], scores[0], real)
                                                        : bootstrap_p_value<double>(scores[s], scores[0], real);
  }
  return results;
}

std::vector<SystemResult> paired_randomization(const std::vector<MetricRows>& systems, int trials, uint64_t seed) {
  check_systems(systems, trials, "approximate randomization");
  const MetricRows& baseline = systems[0];
  const size_t n = baseline.sentences(), columns = baseline.columns;
  const std::vector<int64_t> baseline_sums = column_sums(baseline);
  std::vector<SystemResult> results(systems.size());
  results[0].score = score_exact(baseline, baseline_sums);
  for (size_t s = 1; s < systems.size(); ++s) {
    const MetricRows& system = systems[s];
    const std::vector<int64_t> system_sums = column_sums(system);
    results[s].score = score_exact(system, system_sums);
    if (identical(system, baseline)) {
      results[s].p_value = 1.0;
      continue;
    }
    const double real = std::abs(results[0].score - results[s].score);
    // Pseudo-system A takes the baseline's statistics where the coin says so and the system's elsewhere; B the
    // others: A = system + sum over the coin's sentences of (baseline - system), B = both totals - A.
    NumpyGenerator rng(seed);
    rng.start_array();  // rng.integers(2, size=(trials, n), dtype=bool), filled row by row
    std::vector<int64_t> a(columns), b(columns);
    size_t above = 0;
    for (int t = 0; t < trials; ++t) {
      a = system_sums;
      for (size_t i = 0; i < n; ++i) {
        if (!rng.coin()) continue;
        const std::span<const int64_t> from = baseline.row(i), to = system.row(i);
        for (size_t c = 0; c < columns; ++c) a[c] += from[c] - to[c];
      }
      for (size_t c = 0; c < columns; ++c) b[c] = baseline_sums[c] + system_sums[c] - a[c];
      above += std::abs(score_exact(baseline, a) - score_exact(baseline, b)) > real;
    }
    results[s].p_value = (static_cast<double>(above) + 1) / (static_cast<double>(trials) + 1);
  }
  return results;
}

}  // namespace luong::significance
