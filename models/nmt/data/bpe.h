// Byte-pair encoding of words into subword units (Sennrich, Haddow and Birch, "Neural Machine Translation of
// Rare Words with Subword Units", ACL 2016), on top of the word tokenizer (tokenizer.h).
//
// Learning: each word type of the training text (both sides together: a joint encoding, so a name is split
// alike in source and target; or one side's, subwords.h) starts as its code points, the last one marked as the end of
// the word. The most frequent adjacent pair of symbols, counted over word frequencies, is merged into one new symbol,
// and again, until `max_merges` merges or until no pair occurs twice. Ties go to the pair whose symbols compare
// smallest (bytewise), so the merges depend on the text only.
//
// Segmenting a word: start from its code points and apply the learned merges in the order they were
// learned (the lowest-ranked pair present first, every occurrence of it), until none applies. The pieces
// come out with the tokenizer's joiner mark "￭" after every piece but the last, so detokenize() glues them
// back: "Schwimmbrille" -> [Schwimm￭, brille]. Only word tokens are split: a punctuation token (or any token
// holding a joiner) is kept whole. A word of code points never seen in training is cut into those code
// points (the vocabulary then decides which are <unk>). A token longer than kMaxWordLength code points (a URL,
// a line without spaces) is neither learned from nor split: it stays one token, whose cost would otherwise
// grow with the square of its length.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace luong::nmt {

class Bpe {
 public:
  Bpe() = default;
  // Learns from the tokens of one or more tokenized texts (every sentence of every text counts).
  static Bpe learn(const std::vector<const std::vector<std::vector<std::string>>*>& texts, int64_t max_merges);
  // The same from token counts (tokens that are not BPE words are left out, as learn() leaves them out).
  static Bpe learn_from_counts(const std::unordered_map<std::string, int64_t>& token_counts, int64_t max_merges);
  // From merges as stored by to_list(): "left right" per item, in the order they apply. Errors name the item.
  static Bpe from_list(const std::vector<std::string>& merges);
  // "left right" per merge; the end-of-word mark is written as a "</w>" suffix, as subword-nmt does.
  std::vector<std::string> to_list() const;
  // data.bpe_codes: merges from a file, one "left right" per line in the order they apply: a run's
  // bpe.merges.txt, or the codes of subword-nmt's learn-bpe (version 0.2: its "#version: 0.2" first line is
  // skipped). A pair that repeats an earlier one is skipped and counted in `repeats` (it could never apply).
  // Errors name the file and line; a file without merges is one.
  static Bpe read_codes(const std::string& path, int64_t& repeats);

  int64_t merges() const { return static_cast<int64_t>(merges_.size()); }
  // Appends the subword pieces of `token` to `out` (the token itself when it is not a word).
  void segment(const std::string& token, std::vector<std::string>& out) const;

  // The symbol that marks the end of a word during learning and in to_list() (a word never holds '<').
  static constexpr std::string_view kEndOfWord = "</w>";

 private:
  void add_merge(std::string left, std::string right);
  // One "left right" item; errors start with `where`.
  static std::pair<std::string, std::string> parse_merge(const std::string& item, const std::string& where);

  std::vector<std::pair<std::string, std::string>> merges_;
  std::unordered_map<std::string, int64_t> rank_;  // "left right" -> position in merges_
};

// Whether two tokenizers' encodings split words alike (null = whole words), and one in words for messages:
// "whole words" or "12 BPE merges".
bool same_subwords(const Bpe* a, const Bpe* b);
std::string describe_subwords(const Bpe* bpe);

// The word that the piece at `pos` belongs to: the pieces of one segmented word joined (their joiners
// removed), or the token itself when it is not part of a split word (unk replacement copies whole words).
std::string whole_word_at(const std::vector<std::string>& tokens, size_t pos);

inline constexpr size_t kMaxWordLength = 100;

// Whether BPE may split `token`: a word piece of the tokenizer (no joiner mark, not punctuation) of at most
// kMaxWordLength code points.
bool is_bpe_word(std::string_view token);

}  // namespace luong::nmt
