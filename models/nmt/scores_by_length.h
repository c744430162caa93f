// BLEU and chrF of a test set's translations grouped by source sentence length: the analysis of Luong et al.
// 2015 (section 5.1, Figure 6), where attention keeps its quality on long sentences and the plain model does
// not. `luong eval --by-length W` and `luong bleu --src FILE --by-length W` print it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"

namespace luong::nmt {

// Sentences whose source has first..last words, scored as a corpus of their own.
struct LengthBucket {
  int64_t first = 0, last = 0;
  size_t sentences = 0;
  bleu::BleuScore bleu;
  chrf::ChrfScore chrf;
};

// Words of a source line: its whitespace-separated tokens as written (before any subword splitting).
int64_t source_words(const std::string& line);

// Buckets of `width` words, 1..width, width+1..2 width, ... (an empty source line counts in the first), each
// holding its sentences' corpus BLEU and chrF against every reference set; buckets with no sentence are left
// out. All lists hold one line per source line (the error names the counts otherwise); width >= 1.
std::vector<LengthBucket> scores_by_source_length(const std::vector<std::string>& sources,
                                                  const std::vector<std::string>& hypotheses,
                                                  const std::vector<std::vector<std::string>>& reference_sets,
                                                  int64_t width, int chrf_word_order = 0);

// The table `luong eval` and `luong bleu` print: one row per bucket (source words, sentences, BLEU, chrF, the
// hypothesis/reference length ratio).
std::string format_length_table(const std::vector<LengthBucket>& buckets);
// The buckets for --json: [{"first", "last", "sentences", "bleu", "chrf", "ratio"}, ...] (scores unrounded).
nlohmann::json length_buckets_json(const std::vector<LengthBucket>& buckets);

}  // namespace luong::nmt
