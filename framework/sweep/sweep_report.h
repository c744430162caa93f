// The files a sweep leaves in its output directory: results.csv, results.md, valid_ppl.svg, and valid_bleu.svg /
// valid_chrf.svg when trials recorded those scores.
#pragma once
#include <functional>
#include <optional>
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

// A paired significance test of two translation files against a reference file on a metric ("bleu", "chrf", or
// "chrf++" for trials evaluated with eval.chrf_word_order 2): the
// p-value (the framework knows no metric; `luong sweep` passes the one of models/nmt/significance).
using PairedTestFn = std::function<double(const std::string& metric, const std::string& baseline,
                                          const std::string& system, const std::string& reference)>;

// Where the sweep stands when its report is written: results.md says it.
enum class SweepStage { finished, interrupted, running };

// Ranks the results by the spec's metric and writes <out>/results.csv, results.md and the plots (the curves
// read from each trial's metrics.jsonl), each file replaced whole (a script reading it sees the old or the new).
// With `paired_test` and a metric of bleu or chrf, each evaluated trial's translations are tested against the best
// trial's (p_vs_best); a test that cannot be made (translations missing, another reference) leaves the trial's
// p-value empty, saying why in `log`.
SweepReport write_sweep_report(const SweepSpec& spec, const std::vector<TrialResult>& results,
                               const std::string& out_dir, SweepStage stage, const PairedTestFn& paired_test = {},
                               const std::function<void(const std::string&)>& log = {});

}  // namespace luong::sweep
