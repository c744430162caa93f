// Token strings stored once, sentences as 32-bit indices into them.
//
// A corpus repeats a small set of strings: Multi30k repeated ten times (290,000 pairs, 7.5 million tokens) has
// 28,108 distinct ones. Held as a std::vector<std::string> per sentence, at about 32 bytes a token plus a vector
// per sentence, the tokenized text was most of `luong train`'s start-up peak on that corpus (650 MB, 781 MB with
// BPE); as indices a token takes 4 bytes (319 MB and 300 MB; 277 and 258 MB once the files were read line by
// line and the encoded pairs packed, example_list.h: bench/corpus_bench shows the stages).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace luong::nmt {

// Distinct token strings, numbered 0, 1, 2, ... in the order they were first seen.
class TokenTable {
 public:
  int32_t intern(std::string token);  // the token's number, adding it when new
  const std::string& text(int32_t id) const { return *texts_[static_cast<size_t>(id)]; }
  int32_t size() const { return static_cast<int32_t>(texts_.size()); }

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<const std::string*> texts_;  // the keys of ids_ (a node's key never moves)
};

// The sentences of one side of a corpus: token numbers of a TokenTable, all sentences in one array.
class TokenizedSide {
 public:
  void push_token(int32_t token) { ids_.push_back(token); }
  void end_sentence() { ends_.push_back(static_cast<int64_t>(ids_.size())); }
  void reserve(size_t sentences, size_t tokens) { ends_.reserve(sentences), ids_.reserve(tokens); }

  size_t size() const { return ends_.size(); }  // sentences
  bool empty() const { return ends_.empty(); }
  int64_t tokens() const { return static_cast<int64_t>(ids_.size()); }
  std::span<const int32_t> operator[](size_t sentence) const {
    const int64_t begin = sentence == 0 ? 0 : ends_[sentence - 1];
    return {ids_.data() + begin, static_cast<size_t>(ends_[sentence] - begin)};
  }
  const std::vector<int32_t>& all_tokens() const { return ids_; }

 private:
  std::vector<int32_t> ids_;
  std::vector<int64_t> ends_;  // one past the last token of each sentence
};

}  // namespace luong::nmt
