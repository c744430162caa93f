#include "models/nmt/mbr.h"

#include "models/nmt/chrf.h"

namespace luong::nmt {

size_t mbr_choice(const std::vector<std::string>& candidates) {
  size_t best = 0;
  double best_utility = -1.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    double utility = 0.0;  // the sum: the same count of terms for every candidate, so it ranks as the mean
    for (size_t j = 0; j < candidates.size(); ++j)
      if (j != i) utility += chrf::score_from_stats(chrf::sentence_stats(candidates[i], candidates[j])).score;
    if (utility > best_utility) best = i, best_utility = utility;
  }
  return best;
}

}  // namespace luong::nmt
