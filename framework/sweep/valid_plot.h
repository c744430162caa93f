// The sweep's plots: a validation result (perplexity, BLEU, chrF) against step, one line per trial, as a
// self-contained SVG (axes, ticks, legend), written by hand so that no plotting library is needed.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace luong::sweep {

struct PlotCurve {
  std::string name;
  std::vector<std::pair<int64_t, double>> points;  // (step, value), in step order
};

struct PlotAxis {
  std::string label = "validation perplexity";
  // Perplexities: a logarithmic axis when they span more than a factor of 20 (the first validations of a run
  // are often orders of magnitude above the last), and only positive values drawn. Scores (BLEU, chrF: 0 to
  // 100, often 0 at first) keep a linear axis and draw 0.
  bool log_when_wide = true;
};

// "Nice" axis ticks (1, 2 or 5 times a power of ten) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);

// The SVG document; non-finite values are left out.
std::string valid_svg(const std::vector<PlotCurve>& curves, const std::string& title, const PlotAxis& y = {});

}  // namespace luong::sweep
