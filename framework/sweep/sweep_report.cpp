#include "framework/sweep/sweep_report.h"

#include <fstream>

#include "framework/core/error.h"
#include "framework/sweep/results_table.h"
#include "framework/sweep/sweep_plan.h"
#include "framework/sweep/sweep_runner.h"
#include "framework/sweep/valid_plot.h"

namespace luong::sweep {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) LUONG_FAIL("luong sweep: cannot write ", path);
}

}  // namespace

SweepReport write_sweep_report(const SweepSpec& spec, const std::vector<TrialResult>& results, const std::string& out_dir,
                               bool interrupted) {
  SweepReport rep;
  rep.ranked = rank_results(results, spec.metric, spec.mode);
  bool evaluated = spec.evaluates();
  for (const auto& r : results) evaluated = evaluated || r.bleu.has_value();
  const std::vector<std::string> keys = varied_keys(spec);
  write_file(out_dir + "/results.csv", to_csv(make_table(rep.ranked, keys, evaluated, /*precise=*/true)));
  rep.markdown = to_markdown(make_table(rep.ranked, keys, evaluated, /*precise=*/false));
  size_t ok = 0, failed = 0;
  for (const auto& r : results) ok += r.status == TrialStatus::ok, failed += r.status == TrialStatus::failed;
  const std::string heading = str("# Sweep ", spec.file, "\n\nRanked by ", spec.metric, " (", spec.mode, "); ", ok, " of ",
                                  results.size(), " trials ok, ", failed, " failed",
                                  interrupted ? "; the sweep was interrupted (run it again to continue)" : "", ".\n\n");
  write_file(out_dir + "/results.md", heading + rep.markdown);

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
                        {"valid_chrf", "Validation chrF", {"validation chrF2", false}, false}};
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
