#include "framework/sweep/sweep_report.h"

#include <filesystem>
#include <fstream>

#include "framework/core/error.h"
#include "framework/sweep/results_table.h"
#include "framework/sweep/sweep_plan.h"
#include "framework/sweep/sweep_runner.h"
#include "framework/sweep/valid_plot.h"

namespace luong::sweep {
namespace {

// Through a temporary file and a rename: the report is rewritten while the sweep runs, and a script reading it then
// must not see half a file.
void write_file(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary);
    out << text;
    if (!out.flush()) LUONG_FAIL("luong sweep: cannot write ", temp);
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) LUONG_FAIL("luong sweep: cannot replace ", path, ": ", ec.message());
}

// p_vs_best of every evaluated trial below the best one: its translations against the best trial's, on the
// reference both were scored against.
void test_against_best(std::vector<TrialResult>& ranked, const std::string& metric, const std::string& out_dir,
                       const PairedTestFn& paired_test, const std::function<void(const std::string&)>& log) {
  if (ranked.empty() || ranked[0].status != TrialStatus::ok || !ranked[0].metric(metric)) return;
  const auto translations = [&](const TrialResult& r) {
    return trial_dir(out_dir, r.name) + "/" + kEvalTranslationsFile;
  };
  const TrialResult& best = ranked[0];
  std::error_code ec;
  if (best.eval_ref.empty() || !std::filesystem::exists(translations(best), ec)) {
    if (log)
      log(str("no significance test against the best trial ", best.name, ": its translations were not kept (",
              "evaluated by an earlier luong)"));
    return;
  }
  for (size_t k = 1; k < ranked.size(); ++k) {
    TrialResult& r = ranked[k];
    if (r.status != TrialStatus::ok || !r.metric(metric)) continue;
    if (metric == "chrf" && r.eval_chrf_word_order != best.eval_chrf_word_order) {
      if (log)
        log(str("no significance test of ", r.name, " against ", best.name, ": its chrF has another word order"));
      continue;
    }
    if (r.eval_ref != best.eval_ref || !std::filesystem::exists(translations(r), ec)) {
      if (log)
        log(str("no significance test of ", r.name, " against ", best.name, ": ",
                r.eval_ref.empty() || r.eval_ref == best.eval_ref ? "its translations were not kept"
                                                                  : "it was evaluated on another reference"));
      continue;
    }
    try {
      // chrF++ as "chrf++": the score the trials were ranked by.
      const std::string scored = metric == "chrf" ? metric + std::string(best.eval_chrf_word_order, '+') : metric;
      r.p_vs_best = paired_test(scored, translations(best), translations(r), best.eval_ref);
    } catch (const std::exception& e) {
      if (log) log(str("no significance test of ", r.name, " against ", best.name, ": ", e.what()));
    }
  }
}

}  // namespace

SweepReport write_sweep_report(const SweepSpec& spec, const std::vector<TrialResult>& results,
                               const std::string& out_dir, SweepStage stage, const PairedTestFn& paired_test,
                               const std::function<void(const std::string&)>& log) {
  SweepReport rep;
  rep.ranked = rank_results(results, spec.metric, spec.mode);
  const bool tests = paired_test && (spec.metric == "bleu" || spec.metric == "chrf");
  if (tests) test_against_best(rep.ranked, spec.metric, out_dir, paired_test, log);
  bool any_p = false;
  for (const auto& r : rep.ranked) any_p = any_p || r.p_vs_best.has_value();
  bool evaluated = spec.evaluates();
  for (const auto& r : results) evaluated = evaluated || r.bleu.has_value();
  const std::vector<std::string> keys = varied_keys(spec);
  write_file(out_dir + "/results.csv", to_csv(make_table(rep.ranked, keys, evaluated, /*precise=*/true)));
  rep.markdown = to_markdown(make_table(rep.ranked, keys, evaluated, /*precise=*/false));
  size_t ok = 0, failed = 0, pruned = 0, running = 0, to_come = 0;
  for (const auto& r : results)
    ok += r.status == TrialStatus::ok, failed += r.status == TrialStatus::failed,
        pruned += r.status == TrialStatus::pruned, running += r.status == TrialStatus::running,
        to_come += r.status == TrialStatus::pending || r.status == TrialStatus::waiting;
  const std::string stage_text =
      stage == SweepStage::interrupted ? "; the sweep was interrupted (run it again to continue)"
      : stage == SweepStage::running   ? str("; the sweep is running: ", running, " trial(s) running, ", to_come,
                                             " pending or waiting (these files are rewritten as trials start and end)")
                                       : std::string();
  const std::string rule =
      spec.prune.asha() ? str("successive halving on ", spec.prune.metric, ", reduction ", spec.prune.halving.reduction)
                        : str("median stopping rule on ", spec.prune.metric);
  const std::string pruning = spec.prune.enabled ? str(", ", pruned, " pruned (", rule, ")") : std::string();
  const std::string heading =
      str("# Sweep ", spec.file, "\n\nRanked by ", spec.metric, " (", spec.mode, "); ", ok, " of ", results.size(),
          " trials ok", pruning, ", ", failed, " failed", stage_text, ".\n\n");
  const std::string significance =
      any_p ? str("\np_vs_best: paired bootstrap resampling (1000 resamples, as sacreBLEU's --paired-bs) of each ",
                  "trial's translations against those of the best trial, ", rep.ranked[0].name, ", on ", spec.metric,
                  ". Above 0.05 the trial is not significantly different from the best.\n")
            : std::string();
  write_file(out_dir + "/results.md", heading + rep.markdown + significance);

  rep.files = {"results.md", "results.csv"};
  // One plot per validation result: perplexity always (an empty plot says no trial has validated yet), BLEU and
  // chrF when a trial recorded them (train.valid_bleu, or train.valid_metric bleu or chrf).
  struct Plot {
    const char* key;
    const char* title;
    PlotAxis axis;
    bool always;  // written with no curve at all
  };
  const Plot plots[] = {{"valid_ppl", "Validation perplexity", {"validation perplexity", true}, true},
                        {"valid_bleu", "Validation BLEU", {"validation BLEU", false}, false},
                        {"valid_chrf", "Validation chrF", {"validation chrF", false}, false}};
  for (const Plot& p : plots) {
    std::vector<PlotCurve> curves;
    for (const auto& r : rep.ranked) {
      PlotCurve c{r.name, valid_curve(trial_dir(out_dir, r.name) + "/metrics.jsonl", p.key)};
      if (!c.points.empty()) curves.push_back(std::move(c));  // a trial that never validated has no line
    }
    const std::string file = std::string(p.key) + ".svg";
    if (curves.empty() && !p.always) continue;
    write_file(out_dir + "/" + file, valid_svg(curves, std::string(p.title) + ": " + spec.file, p.axis));
    rep.files.push_back(file);
  }
  return rep;
}

}  // namespace luong::sweep
