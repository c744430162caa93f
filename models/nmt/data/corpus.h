// A parallel corpus ready for batching: token ids per sentence pair, plus the statistics a run logs.
//
//   TokenizedCorpus tok = tokenize_files(src, tgt, tokenizer);       // tokens; empty pairs skipped
//   learn_subwords(tok, merges);                                     // (optional) subword pieces
//   Vocabulary sv = Vocabulary::build(count_tokens(tok, tok.src), size, min_freq);  // (training data only)
//   Corpus corpus = encode_corpus(tok, sv, tv, max_len);            // ids; over-long pairs skipped
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/nmt/data/example_list.h"
#include "models/nmt/data/interned_tokens.h"
#include "models/nmt/data/subwords.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/vocabulary.h"

namespace luong::nmt {

// Both sides' tokens as numbers of one table (interned_tokens.h).
struct TokenizedCorpus {
  TokenTable tokens;
  TokenizedSide src, tgt;
  std::vector<int64_t> line_numbers;  // 1-based line of each pair in the files
  int64_t lines = 0;
  int64_t empty_skipped = 0;
  // Sentence i of a side as strings.
  std::vector<std::string> strings(const TokenizedSide& side, size_t i) const;
};
// Tokens of each line, as tokenizer.tokenize gives them (subword pieces when the tokenizer has a BPE). The
// text's lines are released as they are tokenized (move a corpus in: both copies would be the start-up peak).
TokenizedCorpus tokenize_corpus(ParallelText text, const Tokenizer& tokenizer);
// The same with each side split by its own BPE of `subwords` (the tokenizer's options for the words).
TokenizedCorpus tokenize_corpus(ParallelText text, const TokenizerOptions& options, const Subwords& subwords);
// The same corpus as tokenize_corpus(read_parallel(src_path, tgt_path), ...), with its checks and error
// messages, read line by line: a file's text is never held whole (the training and validation sets).
TokenizedCorpus tokenize_files(const std::string& src_path, const std::string& tgt_path, const Tokenizer& tokenizer);
TokenizedCorpus tokenize_files(const std::string& src_path, const std::string& tgt_path,
                               const TokenizerOptions& options, const Subwords& subwords);
// Splits the word tokens of each side into the pieces of that side's BPE, as Tokenizer::tokenize with it would.
void segment_corpus(TokenizedCorpus& text, const Subwords& subwords);
// data.bpe_merges: learns `merges` joint merges on both sides' words and splits the text with them; null (and
// the text unchanged) when `merges` is 0.
std::shared_ptr<const Bpe> learn_subwords(TokenizedCorpus& text, int64_t merges);

// How a run gets its subword units (the data.bpe_* keys of nmt_config.h): `merges` learned jointly on both
// sides' words or, with joint false, `merges` on each side's words apart; or read from the file `codes` (for
// both sides, or for the source only when `codes_tgt` names the target's). At most one of merges and codes.
struct SubwordSettings {
  int64_t merges = 0;
  bool joint = true;
  std::string codes, codes_tgt;
};
// A run's subword encoding (NmtTask and dump-step), applied to the text; null sides, the text unchanged, for
// words. `log_line` says which ("bpe: 10000 merges", "bpe: 9998 merges from codes.txt", "bpe per side: ...").
Subwords run_subwords(TokenizedCorpus& text, const SubwordSettings& settings, std::string& log_line);
// How often each token occurs in the given sides (Vocabulary::build's input).
std::unordered_map<std::string, int64_t> count_tokens(const TokenizedCorpus& text,
                                                      const std::vector<const TokenizedSide*>& sides);
inline std::unordered_map<std::string, int64_t> count_tokens(const TokenizedCorpus& text, const TokenizedSide& side) {
  return count_tokens(text, std::vector<const TokenizedSide*>{&side});
}

struct CorpusStats {
  int64_t lines = 0;             // lines per file
  int64_t empty_skipped = 0;     // pairs with an empty side
  int64_t too_long_skipped = 0;  // pairs with a side longer than max_len tokens
  int64_t examples = 0;          // pairs kept
  int64_t src_tokens = 0, tgt_tokens = 0;
  int64_t src_unk = 0, tgt_unk = 0;  // tokens mapped to <unk>
  // "29000 lines, 28950 pairs kept, 0 empty skipped, 50 too long skipped; src 380728 tokens (1.22% unk), ..."
  std::string summary() const;
};

struct Corpus {
  ExampleList examples;
  CorpusStats stats;
};

// max_len <= 0 keeps every pair (use it for test sets that must stay aligned with references).
Corpus encode_corpus(const TokenizedCorpus& text, const Vocabulary& src_vocab, const Vocabulary& tgt_vocab,
                     int64_t max_len);

}  // namespace luong::nmt
