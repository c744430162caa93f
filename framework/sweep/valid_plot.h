// The sweep's plot: validation perplexity against step, one line per trial, as a self-contained SVG
// (axes, ticks, legend), written by hand so that no plotting library is needed.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace luong::sweep {

struct PlotCurve {
  std::string name;
  std::vector<std::pair<int64_t, double>> points;  // (step, valid_ppl), in step order
};

// "Nice" axis ticks (1, 2 or 5 times a power of ten) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);

// The SVG document. The y axis is logarithmic when the perplexities span more than a factor of 20 (the
// first validations of a run are often orders of magnitude above the last).
std::string valid_ppl_svg(const std::vector<PlotCurve>& curves, const std::string& title);

}  // namespace luong::sweep
