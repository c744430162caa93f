// Minimum-Bayes-risk choice among a sentence's candidate translations (Kumar and Byrne 2004; with samples as
// both hypotheses and pseudo-references, Eikema and Aziz 2020): the candidate whose expected utility against
// the others is highest, the utility being sentence-level chrF (models/nmt/chrf.h; Eikema and Aziz's choice) or
// BLEU (models/nmt/bleu.h, with its 'exp' smoothing; Kumar and Byrne's). With samples drawn from
// the model the average over the other candidates estimates the expectation under the model, so a translation
// that many samples agree with wins over a single high-probability outlier.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace luong::nmt {

enum class MbrUtility { chrf, bleu };
// "chrf" or "bleu"; throws luong::Error naming both otherwise.
MbrUtility parse_mbr_utility(const std::string& name);

// The index of the candidate with the highest mean utility against every other candidate, each taken in turn as
// the reference (duplicates count as often as they occur: they are draws). Ties go to the lower index, the
// better-scored one when the candidates come best first. One candidate (or none) gives 0.
size_t mbr_choice(const std::vector<std::string>& candidates, MbrUtility utility = MbrUtility::chrf);

}  // namespace luong::nmt
