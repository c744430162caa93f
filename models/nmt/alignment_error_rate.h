// Alignment error rate (Och and Ney 2003) of word alignments against hand alignments that mark each link
// sure (S) or possible (P, with S a subset of P):
//   AER = 1 - (|A & S| + |A & P|) / (|A| + |S|),  precision = |A & P| / |A|,  recall = |A & S| / |S|,
// the counts summed over the whole set (as the standard scripts sum them), A the links proposed.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <utility>

namespace luong::nmt {

using Links = std::set<std::pair<int, int>>;  // (source word, target word), 0-based

struct GoldAlignment {
  Links sure, possible;  // possible holds every sure link too
};

// One line of links: "i-j" sure, "i?j" or "ipj" possible (the forms of the common gold sets), whitespace-separated;
// `one_based` for files that count words from 1. `where` prefixes errors ("gold FILE line N"), which name the
// link that is not one.
GoldAlignment parse_gold_alignment(const std::string& line, bool one_based, const std::string& where);

// The same links read the other way round, (target, source): a gold set made for the other direction.
GoldAlignment reversed(const GoldAlignment& gold);

struct AerCounts {
  int64_t proposed = 0, sure = 0, proposed_sure = 0, proposed_possible = 0;
  void add(const Links& proposed_links, const GoldAlignment& gold);
  double aer() const;        // 0 (every sure link found, nothing outside the possible ones) to 1
  double precision() const;  // of the proposed links, the share that are possible
  double recall() const;     // of the sure links, the share proposed
};

}  // namespace luong::nmt
