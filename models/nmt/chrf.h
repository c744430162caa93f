// Corpus chrF (Popović 2015, "chrF: character n-gram F-score for automatic MT evaluation") exactly as
// sacreBLEU computes it by default (version 2.6.0 checked, the release bleu.h matches): one reference (or
// several: each sentence counts against the reference whose sentence-level score is highest, the first on a tie),
// character n-grams of orders 1..6 over code points of the text with all whitespace removed, case-sensitive,
// beta 2, and sacreBLEU's "effective order": the precisions and recalls of the orders where both sides have
// n-grams are averaged first, then combined into one F-beta. By default no word n-grams (chrF2); with word
// order 2 (Popović 2017, chrF++) word 1- and 2-grams count as two more orders, the words being the
// whitespace-separated ones with one ASCII punctuation character split off the end (else the start) of each
// word longer than one character, as sacreBLEU does. Statistics add up over sentences; the corpus score is
// computed from their sums.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/nmt/bleu.h"

namespace luong::chrf {

inline constexpr int kCharOrder = 6;
inline constexpr int kMaxWordOrder = 2;  // chrF++
inline constexpr int kBeta = 2;

struct ChrfStats {
  // Per order: character n = 1..6, then word n = 1..2 (zero without word n-grams): hypothesis n-grams (0
  // when the reference has none of that order, as sacreBLEU counts them), reference n-grams, clipped matches.
  std::array<int64_t, kCharOrder + kMaxWordOrder> hyp{}, ref{}, match{};
  ChrfStats& operator+=(const ChrfStats& o);
};

struct ChrfScore {
  double score = 0;    // 0..100
  int word_order = 0;  // 0: chrF2; 2: chrF2++ (the name and signature say which)
  int nrefs = 1;       // references per segment (the signature's nrefs)
  std::optional<bleu::ConfidenceEstimate> confidence;
  // The score's full signature: signature(word_order, nrefs), with the estimate's bs and seed when there is one.
  std::string signature() const;
  // sacreBLEU's text line: "chrF2 = 57.31", with a signature "chrF2|<signature> = 57.31".
  std::string format(int width = 2, const std::string& signature = "") const;
  // sacreBLEU's JSON object (same keys and order, score rounded to `width`) plus score_unrounded.
  std::string to_json(int width = 2) const;
};

// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0" (nw: the word order).
std::string signature(int word_order = 0, int nrefs = 1);

// Statistics of one hypothesis against one reference (valid UTF-8; whitespace is Python's str.split()'s), with
// word n-grams up to `word_order` (0 to kMaxWordOrder; other values are an error naming the range).
ChrfStats sentence_stats(const std::string& hypothesis, const std::string& reference, int word_order = 0);
// Against several references (at least one): the statistics of the one with the highest sentence score.
ChrfStats sentence_stats(const std::string& hypothesis, const std::vector<std::string>& references, int word_order = 0);
ChrfScore score_from_stats(const ChrfStats& stats, int word_order = 0);
// Corpus chrF (chrF++ with word_order 2); the line counts must match (the error names both).
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
                      int word_order = 0);
// Against reference sets (each one reference per hypothesis, as a file of them holds).
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& reference_sets, int word_order = 0);

}  // namespace luong::chrf
