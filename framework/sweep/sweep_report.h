// The files a sweep leaves in its output directory: results.csv, results.md, valid_ppl.svg, and valid_bleu.svg /
// valid_chrf.svg when trials recorded those scores.
#pragma once
#include <string>
#include <vector>

#include "framework/sweep/sweep_spec.h"
#include "framework/sweep/trial_result.h"

namespace luong::sweep {

struct SweepReport {
  std::vector<TrialResult> ranked;
  std::string markdown;  // the table as written to results.md (without its heading)
  std::vector<std::string> files;  // the names written in the output directory
};

// Ranks the results by the spec's metric and writes <out>/results.csv, results.md and the plots (the curves
// read from each trial's metrics.jsonl). `interrupted` is noted in results.md.
SweepReport write_sweep_report(const SweepSpec& spec, const std::vector<TrialResult>& results, const std::string& out_dir,
                               bool interrupted);

}  // namespace luong::sweep
