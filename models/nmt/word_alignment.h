// Word alignments read off a translation's attention, in the form Marian's --alignment and fast_align write:
// "i-j" pairs, i a source word and j a target word, each a 0-based index among the whitespace-separated words
// of the input line and of the output line (not of the model's subword pieces), ordered by target word, then
// source word. Used to carry markup, terminology or formatting from a source over to its translation, and
// to inspect what the attention does.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "models/nmt/data/tokenizer.h"

namespace luong::nmt {

// For each span of `text` (bytes, Tokenizer::detokenize's), the words of `text` it overlaps: their first and
// last index among the whitespace-separated words; {-1, -1} for a span with none (empty, or all whitespace).
std::vector<std::pair<int, int>> words_of_spans(const std::string& text,
                                                const std::vector<std::pair<size_t, size_t>>& spans);

// How many whitespace-separated words `text` has (the words alignments count).
int word_count(const std::string& text);

// The weight of each (target word, source word): the attention rows of a target word's tokens (one row per
// target token, columns over the source tokens, in source order) summed over the tokens of each source word and
// averaged over the target word's tokens, so each target word's weights sum to 1 as a row does. `attention`
// may hold one more row (for </s>) than `tgt_tokens`; it is not a word. Rows index [target word][source word].
std::vector<std::vector<double>> word_attention(const Tokenizer& tokenizer, const std::vector<std::string>& src_tokens,
                                                const std::vector<std::string>& tgt_tokens,
                                                const std::vector<std::vector<float>>& attention);

// The links (source word, target word), ordered by target word then source word; none when either side has no
// words. threshold 0 ("hard"): each target word to the source word it weighs most (the first of equals);
// threshold in (0, 1]: every pair whose weight is at least threshold, so a target word may have several source
// words or none.
std::vector<std::pair<int, int>> word_links(const std::vector<std::vector<double>>& weights, double threshold);

// The links as "i-j i-j ..." ("" for none).
std::string format_links(const std::vector<std::pair<int, int>>& links);

inline std::string word_alignment(const std::vector<std::vector<double>>& weights, double threshold) {
  return format_links(word_links(weights, threshold));
}

}  // namespace luong::nmt
