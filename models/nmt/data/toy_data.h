// A deterministic synthetic "translation" task that a small model learns in seconds (configs/tiny.yaml):
// the source is a random sequence of 3..8 words over 16 syllables ("ba ko mi ."), the target is the source
// reversed with each word mapped through a fixed bijection onto 16 other words, the final period kept
// ("papa golf alpha ."). Reversal makes attention necessary; the period exercises the tokenizer's joiners.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace luong::nmt {

// The largest split (pairs) and sentence (words) write_toy_data accepts: `luong gen-data` documents and
// checks them; a toy task needs far less, and a mistyped count must not fill the disk.
inline constexpr int64_t kMaxToyPairs = 10'000'000;
inline constexpr int64_t kMaxToyLength = 1000;

struct ToyDataOptions {
  int64_t train = 2000, valid = 100, test = 100;  // pairs per split
  int64_t min_len = 3, max_len = 8;               // words per sentence (before the period)
  uint64_t seed = 1;
};

// Throws unless 1 <= min_len <= max_len <= kMaxToyLength and every split is 0 .. kMaxToyPairs pairs.
void check_toy_options(const ToyDataOptions& options);

// `count` (source, target) pairs of split number `split` (0 train, 1 valid, 2 test: disjoint random streams).
std::vector<std::pair<std::string, std::string>> toy_pairs(const ToyDataOptions& options, int split, int64_t count);

// Writes train/valid/test .src/.tgt files into `dir` (created if needed), one pair at a time (memory does
// not grow with the split sizes); returns the file paths written.
std::vector<std::string> write_toy_data(const std::string& dir, const ToyDataOptions& options);

}  // namespace luong::nmt
