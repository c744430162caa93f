#include "models/nmt/word_alignment.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/core/utf8.h"

namespace luong::nmt {

std::vector<std::pair<int, int>> words_of_spans(const std::string& text,
                                                const std::vector<std::pair<size_t, size_t>>& spans) {
  // The word each byte belongs to (-1: whitespace), splitting where the tokenizer splits.
  std::vector<int> word(text.size(), -1);
  int current = -1;
  bool in_word = false;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const int n = std::max(1, utf8_sequence_length(text, i, &cp));  // text came from valid tokens
    const bool space = is_space_char(cp);
    if (!space && !in_word) ++current;
    in_word = !space;
    for (int k = 0; k < n && i + static_cast<size_t>(k) < text.size(); ++k)
      word[i + static_cast<size_t>(k)] = space ? -1 : current;
    i += static_cast<size_t>(n);
  }
  std::vector<std::pair<int, int>> out;
  out.reserve(spans.size());
  for (const auto& [begin, end] : spans) {
    std::pair<int, int> range{-1, -1};
    for (size_t b = begin; b < end && b < text.size(); ++b) {
      if (word[b] < 0) continue;
      if (range.first < 0) range.first = word[b];
      range.second = word[b];
    }
    out.push_back(range);
  }
  return out;
}

int word_count(const std::string& text) { return words_of_spans(text, {{0, text.size()}}).front().second + 1; }

std::vector<std::vector<double>> word_attention(const Tokenizer& tokenizer, const std::vector<std::string>& src_tokens,
                                                const std::vector<std::string>& tgt_tokens,
                                                const std::vector<std::vector<float>>& attention) {
  LUONG_CHECK(attention.size() >= tgt_tokens.size(), "word alignment: ", attention.size(), " attention rows for ",
              tgt_tokens.size(), " target tokens (decode with the attention kept)");
  std::vector<std::pair<size_t, size_t>> src_spans, tgt_spans;
  const std::string src_text = tokenizer.detokenize(src_tokens, &src_spans);
  const std::string tgt_text = tokenizer.detokenize(tgt_tokens, &tgt_spans);
  const auto src_words = words_of_spans(src_text, src_spans), tgt_words = words_of_spans(tgt_text, tgt_spans);
  int n_src = 0, n_tgt = 0;
  for (const auto& w : src_words) n_src = std::max(n_src, w.second + 1);
  for (const auto& w : tgt_words) n_tgt = std::max(n_tgt, w.second + 1);

  std::vector<std::vector<double>> weights(static_cast<size_t>(n_tgt), std::vector<double>(static_cast<size_t>(n_src)));
  std::vector<int> rows_in(static_cast<size_t>(n_tgt), 0);
  for (size_t j = 0; j < tgt_tokens.size(); ++j) {
    const auto [first, last] = tgt_words[j];
    const std::vector<float>& row = attention[j];
    LUONG_CHECK(row.size() == src_tokens.size(), "word alignment: an attention row of ", row.size(), " columns for ",
                src_tokens.size(), " source tokens");
    // A token may cover several words (a --dictionary entry with a space in it): each gets its row.
    for (int t = first; t >= 0 && t <= last; ++t) {
      ++rows_in[static_cast<size_t>(t)];
      for (size_t i = 0; i < row.size(); ++i)
        if (const int s = src_words[i].first; s >= 0) weights[static_cast<size_t>(t)][static_cast<size_t>(s)] += row[i];
    }
  }
  for (size_t t = 0; t < weights.size(); ++t)
    for (double& w : weights[t]) w /= std::max(1, rows_in[t]);
  return weights;
}

std::string format_links(const std::vector<std::pair<int, int>>& links) {
  std::string out;
  for (const auto& [s, t] : links) out += (out.empty() ? "" : " ") + std::to_string(s) + "-" + std::to_string(t);
  return out;
}

std::vector<std::pair<int, int>> word_links(const std::vector<std::vector<double>>& weights, double threshold) {
  std::vector<std::pair<int, int>> out;
  const auto add = [&out](size_t s, size_t t) { out.emplace_back(static_cast<int>(s), static_cast<int>(t)); };
  for (size_t t = 0; t < weights.size(); ++t) {
    const std::vector<double>& row = weights[t];
    if (row.empty()) continue;
    if (threshold <= 0) {
      add(static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin()), t);
      continue;
    }
    for (size_t s = 0; s < row.size(); ++s)
      if (row[s] >= threshold - 1e-6) add(s, t);  // float32 rows: a sole source word sums to 1 within rounding
  }
  return out;
}

}  // namespace luong::nmt
