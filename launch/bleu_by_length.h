// `luong bleu REF -i A B ... --src SRC --by-length W`: each system's BLEU (and/or chrF) on the sentences grouped by
// source length, side by side: Luong et al. 2015's Figure 6 for any set of outputs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "launch/bleu_systems.h"

namespace luong::cli {

// `sources` holds one line per reference line (the caller checks); width >= 1 words a bucket.
void print_scores_by_length(const SystemsScoring& how, const std::vector<ScoredSystem>& systems,
                            const std::vector<std::string>& sources, int64_t width);

}  // namespace luong::cli
