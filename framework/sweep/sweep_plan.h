// From a spec to the list of trials: grid combinations times random samples (drawn with Philox from the
// spec's seed, so the same spec always gives the same trials), each with a stable, readable name.
#pragma once
#include <string>
#include <vector>

#include "framework/sweep/sweep_spec.h"

namespace luong::sweep {

struct Trial {
  std::string name;                 // "attention-dot_lr-0.001": a directory name, unique within the sweep
  std::vector<Assignment> varied;   // the keys this trial varies (grid then random, in spec order)
  // Every `--set key=value` for `luong train`: the fixed overrides, then the varied keys.
  std::vector<std::string> sets;
};

// `samples` draws of every random parameter, in spec order, from Generator(seed): uniform values are
// lo + (hi - lo) u, loguniform exp(log lo + (log hi - log lo) u), choice a uniform index.
std::vector<std::vector<Assignment>> sample_random(const SweepSpec& spec);

// All trials: each grid combination (last axis fastest) combined with each random sample; identical
// override sets are kept once. A spec without grid and random gives one trial named "base".
std::vector<Trial> plan_trials(const SweepSpec& spec);

// The keys any trial varies, in order (the table's columns).
std::vector<std::string> varied_keys(const SweepSpec& spec);

// Trial names: "<key>-<label>" joined by '_', the key shortened to its last dotted part when that is
// unambiguous; characters outside [A-Za-z0-9._+-] become '-'. Names that still collide (or exceed 120
// characters) get "-<6 hex digits>" of a hash of the full values.
void assign_names(std::vector<Trial>& trials);

}  // namespace luong::sweep
