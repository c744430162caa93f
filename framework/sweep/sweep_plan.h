// From a spec to the list of trials: grid combinations times random samples (drawn with Philox from the
// spec's seed, so the same spec always gives the same trials), each with a stable, readable name.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "framework/core/philox.h"
#include "framework/sweep/sweep_spec.h"

namespace luong::sweep {

struct Trial {
  std::string name;                 // a TPE trial not drawn yet: "tpe-draw-<n>" (drawn_later)                 //
                                    // "attention-dot_lr-0.001": a directory name, unique within the sweep
  std::vector<Assignment> varied;   // the keys this trial varies (grid then random, in spec order)
  // Every `--set key=value` for `luong train`: the fixed overrides, then the varied keys.
  std::vector<std::string> sets;
  // random.sampler tpe: a trial after the startup ones, whose values the sweep draws when it starts (from the
  // results so far); until then it has no varied values or sets.
  bool drawn_later = false;
};

// A uniform double in [0, 1) with 53 random bits (Generator::uniform has only 24: too coarse to pass full-precision
// learning rates to the trainer).
double uniform53(Generator& g);
// One value of a random parameter: uniform lo + (hi - lo) u, loguniform exp(log lo + (log hi - log lo) u), choice a
// uniform index.
ParamValue draw_value(const RandomParam& p, Generator& g);

// `samples` draws of every random parameter, in spec order, from Generator(seed): uniform values are
// lo + (hi - lo) u, loguniform exp(log lo + (log hi - log lo) u), choice a uniform index.
std::vector<std::vector<Assignment>> sample_random(const SweepSpec& spec);

// A trial's `luong train --set` list: the fixed overrides, then its varied values.
std::vector<std::string> trial_sets(const SweepSpec& spec, const std::vector<Assignment>& varied);

// Whether `yaml` is a value the parameter's distribution can give: one of a choice's values, or a number within a
// uniform or loguniform parameter's bounds.
bool value_allowed(const RandomParam& p, const std::string& yaml);

// All trials: each grid combination (last axis fastest) combined with each random sample; identical
// override sets are kept once. A spec without grid and random gives one trial named "base".
std::vector<Trial> plan_trials(const SweepSpec& spec);

// The keys any trial varies, in order (the table's columns).
std::vector<std::string> varied_keys(const SweepSpec& spec);

// Trial names: "<key>-<label>" joined by '_', the key shortened to its last dotted part when that is
// unambiguous; characters outside [A-Za-z0-9._+-] become '-'. Names that still collide (or exceed 120
// characters) get "-<6 hex digits>" of a hash of the full values.
void assign_names(std::vector<Trial>& trials);
// The name of a trial drawn during the sweep (TPE), as assign_names would give it, with the hash suffix when that
// name is `taken` (by another trial, or a directory already there: the names of trials that ran never change).
void name_drawn_trial(Trial& t, const std::function<bool(const std::string&)>& taken);

}  // namespace luong::sweep
