#include "framework/sweep/successive_halving.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "framework/core/error.h"

namespace luong::sweep {
namespace {

// Lower is better whatever the mode; what is not a number (a diverged perplexity) is the worst.
double cost(double v, const std::string& mode) {
  if (std::isnan(v) || (mode == "max" && !std::isfinite(v))) return std::numeric_limits<double>::infinity();
  return mode == "min" ? v : -v;
}

// The rung's entries best first (ties by trial index, so a rerun decides as the first run did).
std::vector<RungEntry> ordered(std::vector<RungEntry> rung, const std::string& mode) {
  std::stable_sort(rung.begin(), rung.end(), [&](const RungEntry& a, const RungEntry& b) {
    const double ca = cost(a.value, mode), cb = cost(b.value, mode);
    return ca != cb ? ca < cb : a.trial < b.trial;
  });
  return rung;
}

}  // namespace

void check_step_limit(int64_t max_steps) {
  if (max_steps <= 0)
    LUONG_FAIL("prune.rule asha trains each trial to a number of steps, and train.max_steps is 0 (no limit) in the ",
               "trial's config: set it in the spec's overrides (the steps of the last rung)");
}

std::vector<int64_t> rung_steps(const HalvingRule& rule, int64_t max_steps) {
  LUONG_CHECK(rule.min_steps >= 1 && rule.reduction >= 2, "successive halving: min_steps ", rule.min_steps,
              ", reduction ", rule.reduction);
  std::vector<int64_t> out;
  for (int64_t s = rule.min_steps; s < max_steps; s *= rule.reduction) {
    out.push_back(s);
    if (s > max_steps / rule.reduction) break;  // the next would pass max_steps (and could overflow)
  }
  out.push_back(max_steps);
  return out;
}

std::optional<size_t> promotion(const std::vector<RungEntry>& rung, const HalvingRule& rule, const std::string& mode) {
  const std::vector<RungEntry> best_first = ordered(rung, mode);
  const size_t top = best_first.size() / static_cast<size_t>(rule.reduction);
  for (size_t k = 0; k < top; ++k)
    if (best_first[k].waiting) return best_first[k].trial;
  return std::nullopt;
}

size_t rank_in_rung(const std::vector<RungEntry>& rung, size_t trial, const std::string& mode) {
  const std::vector<RungEntry> best_first = ordered(rung, mode);
  for (size_t k = 0; k < best_first.size(); ++k)
    if (best_first[k].trial == trial) return k + 1;
  LUONG_FAIL("successive halving: trial ", trial, " is not in the rung");
}

double best_until(const ValidCurve& curve, int64_t step, const std::string& mode) {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [s, v] : curve) {
    if (s > step || std::isnan(v)) continue;
    if (std::isnan(best) || (mode == "min" ? v < best : v > best)) best = v;
  }
  return best;
}

HalvingSchedule::HalvingSchedule(const HalvingRule& rule, std::string mode, size_t trials)
    : rule_(rule), mode_(std::move(mode)), trials_(trials) {}

void HalvingSchedule::set_max_steps(size_t i, int64_t max_steps) {
  LUONG_CHECK(max_steps > 0, "successive halving: trial ", i, " has no step limit");
  trials_[i].max_steps = max_steps;
}

std::vector<int64_t> HalvingSchedule::rungs(size_t i) const { return rung_steps(rule_, trials_[i].max_steps); }

std::string HalvingSchedule::rung_text(size_t i, int64_t steps) const {
  const auto r = rungs(i);
  const auto at = std::find(r.begin(), r.end(), steps);
  if (at == r.end()) return "not a rung";
  return str("rung ", at - r.begin() + 1, " of ", r.size());
}

int64_t HalvingSchedule::next_rung(size_t i, int64_t steps) const {
  const auto r = rungs(i);
  const auto above = std::upper_bound(r.begin(), r.end(), steps);
  return above == r.end() ? r.back() : *above;
}

void HalvingSchedule::restore(size_t i, int64_t target, bool waiting, const ValidCurve& curve) {
  TrialRungs& t = trials_[i];
  if (target <= 0) return;
  const auto r = rungs(i);
  const bool is_rung = std::find(r.begin(), r.end(), target) != r.end();
  // It reached the rungs below its target; waiting, the target too.
  int64_t below = 0;
  for (int64_t s : r)
    if (s < target || (waiting && is_rung && s == target)) below = s;
  t.reached = below;
  t.waiting = waiting && is_rung && target < t.max_steps;
  t.target = is_rung ? target : next_rung(i, target);
  t.curve = curve;
}

void HalvingSchedule::finished(size_t i, int64_t steps, const ValidCurve& curve) {
  TrialRungs& t = trials_[i];
  t.reached = steps, t.waiting = false, t.curve = curve;
}

void HalvingSchedule::failed(size_t i) { trials_[i].failed = true, trials_[i].waiting = false; }

int64_t HalvingSchedule::start(size_t i) {
  TrialRungs& t = trials_[i];
  if (t.target == 0)
    t.target = rungs(i).front();
  else if (t.waiting)
    t.target = next_rung(i, t.target);
  t.waiting = false, t.failed = false;
  return t.target;
}

bool HalvingSchedule::reached_target(size_t i, const ValidCurve& curve) {
  TrialRungs& t = trials_[i];
  t.reached = t.target, t.curve = curve;
  t.waiting = t.target < t.max_steps;
  return t.waiting;
}

std::vector<RungEntry> HalvingSchedule::rung_at(int64_t steps) const {
  std::vector<RungEntry> out;
  for (size_t i = 0; i < trials_.size(); ++i) {
    const TrialRungs& t = trials_[i];
    if (t.reached >= steps && !t.failed)
      out.push_back({i, best_until(t.curve, steps, mode_), t.waiting && t.target == steps});
  }
  return out;
}

std::optional<size_t> HalvingSchedule::due() const {
  std::vector<int64_t> waiting_at;
  for (const TrialRungs& t : trials_)
    if (t.waiting) waiting_at.push_back(t.target);
  std::sort(waiting_at.rbegin(), waiting_at.rend());
  waiting_at.erase(std::unique(waiting_at.begin(), waiting_at.end()), waiting_at.end());
  for (int64_t steps : waiting_at)
    if (auto p = promotion(rung_at(steps), rule_, mode_)) return p;
  return std::nullopt;
}

std::optional<size_t> HalvingSchedule::last_chance() const {
  // The highest rung anyone waits at, and its best waiting trial.
  int64_t highest = 0;
  for (const TrialRungs& t : trials_)
    if (t.waiting) highest = std::max(highest, t.target);
  if (highest == 0) return std::nullopt;
  std::vector<RungEntry> waiting_there;
  for (const RungEntry& e : rung_at(highest))
    if (e.waiting) waiting_there.push_back(e);
  const size_t best = ordered(waiting_there, mode_).front().trial;
  // Not when a trial has passed that rung already: then the rung did send one on.
  const int64_t next = next_rung(best, highest);
  for (const TrialRungs& t : trials_)
    if (t.reached >= next && !t.failed) return std::nullopt;
  return best;
}

std::string HalvingSchedule::why_pruned(size_t i, const std::string& metric) const {
  const TrialRungs& t = trials_[i];
  const auto rung = rung_at(t.target);
  size_t went_on = 0;
  for (const RungEntry& e : rung) went_on += trials_[e.trial].reached > t.target;
  return str("stopped at step ", t.target, " (", rung_text(i, t.target), "): best ", metric, " ", best_at(i, t.target),
             " ranked ", rank_in_rung(rung, i, mode_), " of the ", rung.size(), " trials that reached that step, and ",
             went_on, " went on");
}

}  // namespace luong::sweep
