// What a sweep knows about one trial, and the files it is read from: the trial's result.json (written
// once the trial finishes, ok or failed), its metrics.jsonl (validation curve) and its train.log (the
// `luong train --json` summary line, the last lines of a failure).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/sweep/sweep_plan.h"

namespace luong::sweep {

// ok / failed / pruned: finished (result.json written; pruned: stopped by the spec's `prune:` rule while it trained,
// its checkpoints kept); interrupted: stopped by the sweep, resumable; pending: not started (yet, or before the sweep
// stopped); running: training or being evaluated (in the tables written while the sweep runs); waiting: reached a
// rung of successive halving and waits to be compared (`prune: {rule: asha}`).
enum class TrialStatus { ok, failed, interrupted, pending, pruned, running, waiting };
const char* status_name(TrialStatus s);

struct TrialResult {
  std::string name;
  TrialStatus status = TrialStatus::pending;
  std::vector<Assignment> varied;
  std::vector<std::string> sets;
  std::optional<double> valid_ppl;  // best validation perplexity (min over metrics.jsonl "valid" records)
  std::optional<double> bleu;       // when the sweep's metric is bleu or chrf: luong eval's scores of the best
  std::optional<double> chrf;       // checkpoint's translations (chrf: absent in results of earlier versions)
  std::optional<double> valid_bleu;  // best validation BLEU (max over "valid" records), when the trial computed it
  std::optional<double> valid_chrf;  // best validation chrF (max over "valid" records, on its own), likewise
  std::string eval_ref;  // the reference file luong eval scored `bleu` and `chrf` against (empty before it was kept)
  int eval_chrf_word_order = 0;  // that evaluation's chrF word order (2: `chrf` is chrF2++; eval.chrf_word_order)
  // The paired bootstrap p-value of this trial's translations against the best trial's, on the sweep's metric
  // (bleu or chrf): set by the report, not stored in result.json.
  std::optional<double> p_vs_best;
  double tokens_per_s = 0.0;
  double wall_s = 0.0;              // wall time of all this trial's processes, over every sweep run
  int64_t steps = 0;
  int64_t attempts = 0;             // how many times `luong train` was started for this trial
  std::string stop_reason;          // luong train's; a pruned trial's: why it was stopped (median_stopping's describe)
  std::string resumed_from;
  std::string error;                // failed: what went wrong (exit status and the log's last lines)

  // The value of a metric (one of sweep_metrics()); nullopt when not measured.
  std::optional<double> metric(const std::string& name) const;
};

nlohmann::json to_json(const TrialResult& r);
TrialResult result_from_json(const nlohmann::json& j);

// The file a trial's evaluation leaves its translations in (luong eval --output), one line per eval source line.
inline constexpr const char* kEvalTranslationsFile = "eval_translations.txt";

// <trial_dir>/result.json, written atomically (temp file + rename) so a kill never leaves half a file.
void write_result(const std::string& trial_dir, const TrialResult& r);
// nullopt when the trial has not finished (no result.json); throws naming the file when it is corrupt.
std::optional<TrialResult> read_result(const std::string& trial_dir);

// The (step, value of `key`) points of the "valid" records in a metrics.jsonl that have it (missing file: none).
// Lines that do not parse (a line cut by a kill) are skipped.
std::vector<std::pair<int64_t, double>> valid_curve(const std::string& metrics_path,
                                                    const std::string& key = "valid_ppl");
std::optional<double> best_valid_ppl(const std::string& metrics_path);
// The highest `key` ("valid_bleu", "valid_chrf") of the "valid" records (written with train.valid_bleu or
// train.valid_metric bleu or chrf); none without.
std::optional<double> best_valid_score(const std::string& metrics_path, const std::string& key);
// Mean tokens_per_s of the "train" records (for a trial whose last run had nothing left to train).
double mean_train_tokens_per_s(const std::string& metrics_path);
// The highest "step" of any record (0 when none): how far a trial killed before its summary line got.
int64_t last_logged_step(const std::string& metrics_path);

// The last JSON object line of a log that has `required_key` (the `--json` summary of luong train/eval),
// reading from byte `from` on: a trial's logs are appended to by every attempt, and only the summary of the
// attempt that just ended (written after `from`, the log's size when it started) describes it.
std::optional<nlohmann::json> last_json_line(const std::string& log_path, const std::string& required_key,
                                             std::uintmax_t from = 0);
// The last `n` non-empty lines of a file from byte `from` on (the attempt that just ended, as above), joined
// with '\n' (progress-line escape codes removed).
std::string log_tail(const std::string& path, size_t n, std::uintmax_t from = 0);

// A number of a JSON object (a `luong train --json` summary, a result.json), or `fallback` when it is
// absent or null (unknown: no step ran, nothing validated or measured).
template <class T>
T number_or(const nlohmann::json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->template get<T>() : fallback;
}

}  // namespace luong::sweep
