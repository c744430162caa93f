// The median stopping rule that prunes a sweep's trials (spec `prune:`): a trial whose best validation result
// so far is worse than the median of what the finished trials had reached by the same step is stopped, so a
// search spends its time on the promising part of the space (Golovin et al. 2017, "Google Vizier", section 3.2.2;
// Optuna's MedianPruner). Pure: the runner feeds it the validation curves it reads from metrics.jsonl.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/sweep/successive_halving.h"

namespace luong::sweep {

// The spec's `prune:`: the median stopping rule (its fields below), or successive halving (`rule: asha`).
struct PruneRule {
  bool enabled = false;
  std::string rule = "median";  // median or asha
  std::string metric;           // valid_ppl, valid_bleu or valid_chrf
  std::string mode;             // min or max: which way is better
  int64_t min_trials = 3;       // finished trials that must have validated at the step before any comparison
  int64_t min_validations = 2;  // validations a trial makes before it may be stopped (early ones are noisy)
  HalvingRule halving;          // rule asha
  bool median() const { return enabled && rule == "median"; }
  bool asha() const { return enabled && rule == "asha"; }
};

struct PruneVerdict {
  int64_t step = 0;     // the trial's last validation
  double value = 0.0;   // its best value up to there
  double median = 0.0;  // the finished trials' median best value up to that step
  size_t compared = 0;  // how many finished trials that median is over
};

// Whether `trial` should stop now. At its last validation step s, the trial's best value over its records is
// compared with the median, over the finished trials that trained at least to s (their last record's step is
// s or later) and validated by then, of each one's best value at steps <= s: stop when strictly worse. Nothing
// is stopped with fewer than rule.min_validations records, or fewer than rule.min_trials trials to compare with.
// Non-finite values (a diverged run's perplexity) are worse than any finite one.
std::optional<PruneVerdict> median_stopping(const ValidCurve& trial, const std::vector<ValidCurve>& finished,
                                            const PruneRule& rule);

// "pruned at step 40: valid_ppl 12.3 is worse than 9.87, the median of 3 finished trials at that step".
std::string describe(const PruneVerdict& v, const PruneRule& rule);

}  // namespace luong::sweep
