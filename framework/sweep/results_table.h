// The sweep's results table: trials ranked by the metric (failed, interrupted and pending trials last),
// as CSV (full precision, for scripts), Markdown (rounded, for people) and a JSON array.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/sweep/trial_result.h"

namespace luong::sweep {

// Ok trials with a metric value first, best first (mode "min" or "max"); then ok trials without one,
// then interrupted (by their partial value), pending and failed trials. Ties keep the plan order.
std::vector<TrialResult> rank_results(std::vector<TrialResult> results, const std::string& metric, const std::string& mode);

struct ResultsTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// Columns: rank, trial, one per varied key, valid_ppl, valid_bleu and valid_chrf (each when a trial has it), bleu
// (when `evaluated`: the sweep's metric is bleu or chrf, or a trial was evaluated), chrf (evaluated, and a trial
// has it), p_vs_best (when a trial has one: "best" in the first row), tokens_per_s, wall_s, steps, status, error.
// `precise` keeps full precision and the whole error (CSV); otherwise numbers are rounded for reading and the error is
// one short line: for a crash, the last "error:" line of the trial's log.
ResultsTable make_table(const std::vector<TrialResult>& ranked, const std::vector<std::string>& keys, bool evaluated,
                        bool precise);
std::string to_csv(const ResultsTable& t);
std::string to_markdown(const ResultsTable& t);
// One object per ranked trial: its result.json fields plus "rank" and "run_dir".
nlohmann::json results_json(const std::vector<TrialResult>& ranked, const std::string& out_dir);

}  // namespace luong::sweep
