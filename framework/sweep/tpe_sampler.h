// The tree-structured Parzen estimator (Bergstra, Bardenet, Bengio and Kegl 2011), as `random.sampler: tpe` uses
// it: the trials so far are split into the best quarter ("below") and the rest ("above"); each random parameter
// gets a density l(x) fitted to the values of the best and g(x) fitted to the others (a Gaussian at each value plus
// a wide prior, truncated to the bounds, in log space for loguniform; counts plus one for choice); the next trial
// takes, parameter by parameter, the one of kTpeCandidates draws from l with the largest l(x) / g(x) -- the draw
// that maximises expected improvement.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/sweep/sweep_spec.h"
#include "framework/sweep/trial_result.h"

namespace luong::sweep {

// Candidates drawn from l(x) per parameter (Optuna's and hyperopt's default).
inline constexpr int kTpeCandidates = 24;
// The trials a draw needs to model; with fewer (the startup trials failed, or all still run) it draws at random.
inline constexpr size_t kTpeMinObservations = 2;

// How many of n ranked trials are "below" (the good ones): ceil(n / 4), hyperopt's gamma of 0.25, at least one.
size_t tpe_below_count(size_t n);

// The trials a draw learns from, best first: those finished ok with a value of the spec's metric (by it, in its mode;
// a NaN or infinite value last), then those stopped early by the pruning rule (pruned, or waiting at a rung) -- they
// were stopped for being behind -- by the steps they reached (more first), then by the best value of prune.metric.
// Failed, pending and interrupted trials are left out. Ties go to the earlier trial. `running` (trials training with
// no result yet) come last, as if they were the worst -- Optuna's "constant liar": two trials drawn while the same
// others run would otherwise be drawn from the same results, and alike -- but only when there are results enough to
// model (kTpeMinObservations); without, the draw is random anyway.
std::vector<size_t> tpe_ranking(const std::vector<TrialResult>& results, const SweepSpec& spec,
                                const std::vector<size_t>& running = {});

// The values of trial `draw` (its position in the sweep) from `ranked`, the varied values of the trials tpe_ranking
// gives, best first. Deterministic: the same observations, seed and draw give the same values. With fewer than
// kTpeMinObservations it is a random draw of each parameter.
std::vector<Assignment> tpe_draw(const std::vector<RandomParam>& params,
                                 const std::vector<std::vector<Assignment>>& ranked, uint64_t seed, uint64_t draw);

}  // namespace luong::sweep
