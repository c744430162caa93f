#include "framework/sweep/median_stopping.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/core/error.h"

namespace luong::sweep {
namespace {

// The value as a cost: lower is better whatever the mode, and a NaN (or a score that is not finite) the worst.
double cost(double v, const std::string& mode) {
  if (std::isnan(v) || (mode == "max" && !std::isfinite(v))) return std::numeric_limits<double>::infinity();
  return mode == "min" ? v : -v;
}

// The lowest cost among the records at steps <= `step`; nullopt when there is none.
std::optional<double> best_cost_until(const ValidCurve& c, int64_t step, const std::string& mode) {
  std::optional<double> best;
  for (const auto& [s, v] : c)
    if (s <= step) best = std::min(best.value_or(std::numeric_limits<double>::infinity()), cost(v, mode));
  return best;
}

int64_t last_step(const ValidCurve& c) {
  int64_t last = 0;
  for (const auto& p : c) last = std::max(last, p.first);
  return last;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

std::optional<PruneVerdict> median_stopping(const ValidCurve& trial, const std::vector<ValidCurve>& finished,
                                            const PruneRule& rule) {
  if (!rule.enabled || trial.empty() || static_cast<int64_t>(trial.size()) < rule.min_validations) return std::nullopt;
  const int64_t step = trial.back().first;
  const double own = *best_cost_until(trial, std::numeric_limits<int64_t>::max(), rule.mode);
  std::vector<double> others;
  for (const ValidCurve& f : finished) {
    if (f.empty() || last_step(f) < step) continue;  // it never trained as far: no comparison at this step
    if (auto b = best_cost_until(f, step, rule.mode)) others.push_back(*b);
  }
  if (static_cast<int64_t>(others.size()) < rule.min_trials) return std::nullopt;
  const double m = median(others);
  // Two infinite costs are not "worse" than each other: a trial as bad as a diverged median is left alone.
  if (!(own > m)) return std::nullopt;
  const double sign = rule.mode == "min" ? 1.0 : -1.0;
  return PruneVerdict{step, sign * own, sign * m, others.size()};
}

std::string describe(const PruneVerdict& v, const PruneRule& rule) {
  return str("pruned at step ", v.step, ": best ", rule.metric, " ", v.value, " is worse than ", v.median,
             ", the median of ", v.compared, " finished trial(s) by that step");
}

}  // namespace luong::sweep
