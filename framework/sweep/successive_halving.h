// Asynchronous successive halving (ASHA; Li et al. 2020, "A System for Massively Parallel Hyperparameter Tuning",
// algorithm 2; Ray Tune's default scheduler), the spec's `prune: {rule: asha}`. Every trial first trains to a small
// number of steps; of the trials that reached such a step count (a "rung"), the best 1/reduction go on to reduction
// times as many steps, and so on up to the trial's own train.max_steps. Unlike the median rule, nothing has to
// finish first: with many trials at once (a GPU node) the median rule has no finished trial to compare with until
// late, while successive halving compares trials at the first rung. Pure: the runner says what each trial reached
// and with which validation curve, and asks which trial runs next and how far.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace luong::sweep {

// (step, value) of each validation, in the order the trial logged them.
using ValidCurve = std::vector<std::pair<int64_t, double>>;

struct HalvingRule {
  int64_t min_steps = 0;  // the first rung: the steps every trial trains first
  int64_t reduction = 3;  // eta: 1/eta of a rung's trials go on, to eta times the steps
};

// Throws luong::Error when a trial's train.max_steps is 0 (no step limit): its rungs are steps.
void check_step_limit(int64_t max_steps);

// The step counts a trial trains to, one run each: min_steps, min_steps * reduction, ... while below max_steps,
// then max_steps itself (only max_steps when it is not above min_steps).
std::vector<int64_t> rung_steps(const HalvingRule& rule, int64_t max_steps);

// A trial that reached a rung's steps: its best validation value up to them, and whether it waits there to be
// promoted (not one that went on, or one whose run ended there).
struct RungEntry {
  size_t trial = 0;  // ties in value go to the lower index
  double value = 0.0;
  bool waiting = false;
};

// Which waiting trial of a rung goes on: the best one among the rung's top floor(n / reduction) by value (mode min
// or max; NaN and, for max, infinities the worst); nullopt when none of those is waiting.
std::optional<size_t> promotion(const std::vector<RungEntry>& rung, const HalvingRule& rule, const std::string& mode);

// The place of `trial` in its rung (1 = best) by the same order.
size_t rank_in_rung(const std::vector<RungEntry>& rung, size_t trial, const std::string& mode);

// The best value of a curve at steps <= `step` by `mode`; NaN when it has none there.
double best_until(const ValidCurve& curve, int64_t step, const std::string& mode);

// Where each trial of a sweep stands, and what runs next.
class HalvingSchedule {
 public:
  HalvingSchedule(const HalvingRule& rule, std::string mode, size_t trials);

  // Trial i's own train.max_steps, its last rung (set before anything else about it).
  void set_max_steps(size_t i, int64_t max_steps);
  std::vector<int64_t> rungs(size_t i) const;
  // "rung 2 of 4"
  std::string rung_text(size_t i, int64_t steps) const;

  // What an earlier sweep left: trial i's last run went to `target` steps and reached them (`waiting`), or was
  // stopped on the way. A target that is not one of its rungs (the spec's rungs changed) is taken as stopped on
  // the way to the next rung above it.
  void restore(size_t i, int64_t target, bool waiting, const ValidCurve& curve);
  // Trial i finished for good after `steps` (its limit, early stopping; or a finished trial read back): it counts in
  // the rungs it reached and is never promoted.
  void finished(size_t i, int64_t steps, const ValidCurve& curve);
  // Trial i failed: it leaves every rung.
  void failed(size_t i);

  // Trial i starts a run; returns the steps it trains to: its first rung, the rung after the one it waits at, or
  // the target of a run that was stopped on the way.
  int64_t start(size_t i);
  // Its run ended at its target: whether that is short of its max_steps, so that it now waits there (else it is
  // finished).
  bool reached_target(size_t i, const ValidCurve& curve);

  // The waiting trial due to go on, from the highest rung down (a trial nearer its end first); nullopt if none.
  std::optional<size_t> due() const;
  // A rung of fewer than `reduction` trials promotes none, and ASHA's stream of trials is endless while a sweep's
  // is counted: when nothing else can run, the best trial waiting at the highest rung that no trial has passed
  // goes on, so that at least one trial trains to its end.
  std::optional<size_t> last_chance() const;

  int64_t target(size_t i) const { return trials_[i].target; }
  int64_t reached(size_t i) const { return trials_[i].reached; }
  bool waiting(size_t i) const { return trials_[i].waiting; }
  double best_at(size_t i, int64_t steps) const { return best_until(trials_[i].curve, steps, mode_); }
  // Why a trial still waiting when the sweep ends is pruned: "stopped at step 10 (rung 1 of 4): best valid_ppl 20.4
  // ranked 3 of the 5 trials that reached that step, and 2 went on".
  std::string why_pruned(size_t i, const std::string& metric) const;

 private:
  struct TrialRungs {
    int64_t max_steps = 0;
    int64_t target = 0;   // the steps its current or last run trains to; 0 before its first
    int64_t reached = 0;  // the steps it is known to have trained
    bool waiting = false;
    bool failed = false;
    ValidCurve curve;  // its validations up to `reached`
  };
  std::vector<RungEntry> rung_at(int64_t steps) const;
  int64_t next_rung(size_t i, int64_t steps) const;  // the first rung above `steps` (max_steps at most)

  HalvingRule rule_;
  std::string mode_;
  std::vector<TrialRungs> trials_;
};

}  // namespace luong::sweep
