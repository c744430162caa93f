// Corpus chrF (Popović 2015, "chrF: character n-gram F-score for automatic MT evaluation") exactly as
// sacreBLEU computes it by default (version 2.6.0 checked, the release bleu.h matches): one reference,
// character n-grams of orders 1..6 over code points of the text with all whitespace removed, case-sensitive,
// no word n-grams (chrF2, not chrF++), beta 2, and sacreBLEU's "effective order": the precisions and recalls
// of the orders where both sides have n-grams are averaged first, then combined into one F-beta.
// Statistics add up over sentences; the corpus score is computed from their sums.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace luong::chrf {

inline constexpr int kCharOrder = 6;
inline constexpr int kBeta = 2;

struct ChrfStats {
  // Per order n = 1..6: hypothesis n-grams (0 when the reference has none of that order, as sacreBLEU
  // counts them), reference n-grams, and clipped matches.
  std::array<int64_t, kCharOrder> hyp{}, ref{}, match{};
  ChrfStats& operator+=(const ChrfStats& o);
};

struct ChrfScore {
  double score = 0;  // 0..100
  // sacreBLEU's text line: "chrF2 = 57.31", with a signature "chrF2|<signature> = 57.31".
  std::string format(int width = 2, const std::string& signature = "") const;
  // sacreBLEU's JSON object (same keys and order, score rounded to `width`) plus score_unrounded.
  std::string to_json(int width = 2) const;
};

// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0".
std::string signature();

// Statistics of one hypothesis against one reference (valid UTF-8; whitespace is Python's str.split()'s).
ChrfStats sentence_stats(const std::string& hypothesis, const std::string& reference);
ChrfScore score_from_stats(const ChrfStats& stats);
// Corpus chrF; the line counts must match (the error names both).
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

}  // namespace luong::chrf
