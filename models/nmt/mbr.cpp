#include "models/nmt/mbr.h"

#include "framework/core/error.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"

namespace luong::nmt {
namespace {

double utility_of(const std::string& hypothesis, const std::string& reference, MbrUtility u) {
  if (u == MbrUtility::bleu) return bleu::score_from_stats(bleu::sentence_stats(hypothesis, reference)).score;
  return chrf::score_from_stats(chrf::sentence_stats(hypothesis, reference)).score;
}

}  // namespace

MbrUtility parse_mbr_utility(const std::string& name) {
  if (name == "chrf") return MbrUtility::chrf;
  if (name == "bleu") return MbrUtility::bleu;
  LUONG_FAIL("unknown MBR utility '", name, "'; expected chrf or bleu");
}

size_t mbr_choice(const std::vector<std::string>& candidates, MbrUtility u) {
  size_t best = 0;
  double best_utility = -1.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    double utility = 0.0;  // the sum: the same count of terms for every candidate, so it ranks as the mean
    for (size_t j = 0; j < candidates.size(); ++j)
      if (j != i) utility += utility_of(candidates[i], candidates[j], u);
    if (utility > best_utility) best = i, best_utility = utility;
  }
  return best;
}

}  // namespace luong::nmt
