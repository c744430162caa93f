// Statistical tests of corpus scores, as sacreBLEU 2.6.0 runs them (its significance.py; Koehn 2004 for paired
// bootstrap resampling, Riezler and Maxwell 2005 for approximate randomization), with numpy's generator seeded the
// same way, so the same seed gives sacreBLEU's resamples, p-values, means and intervals:
//
// - bootstrap_confidence (`sacrebleu --confidence`): `resamples` corpora of the same size drawn with replacement
//   from the sentences; the 95% interval's half-width from the 2.5% and 97.5% resample scores, and their mean.
// - paired_bootstrap (`--paired-bs`): the baseline and every system scored on the same resamples; p is the share
//   of resamples whose score difference, centred on the resamples' mean difference, exceeds the real one (plus one
//   in numerator and denominator).
// - paired_randomization (`--paired-ar`): in each trial every sentence's statistics are swapped between the two
//   systems with probability 1/2; p is the share of trials whose score difference exceeds the real one (+1).
//
// One deliberate difference: a system whose statistics equal the baseline's in every sentence (the same output)
// gets p = 1, where sacreBLEU's strict comparison counts no tie and reports p = 1 / (n + 1) for two copies.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "models/nmt/significance/metric_rows.h"

namespace luong::significance {

inline constexpr uint64_t kDefaultSeed = 12345;  // sacreBLEU's (SACREBLEU_SEED)
inline constexpr int kDefaultResamples = 1000;   // --confidence-n, --paired-bs-n
inline constexpr int kDefaultTrials = 10000;     // --paired-ar-n

struct Estimate {
  double mean = 0;  // of the resample scores
  double ci = 0;    // half the width of the interval holding the middle 95% of them
};

struct SystemResult {
  double score = 0;                  // the system's own corpus score
  std::optional<double> p_value;     // against the baseline (none for the baseline)
  std::optional<Estimate> estimate;  // paired bootstrap only
};

// The estimate of one system's score (sacreBLEU's Score.estimate_ci: an exact mean of the resamples).
Estimate bootstrap_confidence(const MetricRows& system, int resamples, uint64_t seed = kDefaultSeed);

// `systems[0]` is the baseline; all hold one metric's rows for the same sentences. One result per system, in order.
std::vector<SystemResult> paired_bootstrap(const std::vector<MetricRows>& systems, int resamples,
                                           uint64_t seed = kDefaultSeed);
std::vector<SystemResult> paired_randomization(const std::vector<MetricRows>& systems, int trials,
                                               uint64_t seed = kDefaultSeed);

}  // namespace luong::significance
