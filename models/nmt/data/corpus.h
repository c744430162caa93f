// A parallel corpus ready for batching: token ids per sentence pair, plus the statistics a run logs.
//
//   ParallelText text = read_parallel(src, tgt);              // lines, empty pairs skipped
//   TokenizedCorpus tok = tokenize_corpus(text, tokenizer);   // token strings
//   segment_corpus(tok, bpe);                                  // (optional) subword pieces
//   Vocabulary sv = Vocabulary::build(tok.src, size, min_freq);  // (training data only)
//   Corpus corpus = encode_corpus(tok, sv, tv, max_len);      // ids; over-long pairs skipped
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/nmt/data/text_reader.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/vocabulary.h"

namespace luong::nmt {

struct TokenizedCorpus {
  std::vector<std::vector<std::string>> src, tgt;
  std::vector<int64_t> line_numbers;  // 1-based line of each pair in the files
  int64_t lines = 0;
  int64_t empty_skipped = 0;
};
// Tokens of each line, as tokenizer.tokenize gives them (subword pieces when the tokenizer has a BPE).
TokenizedCorpus tokenize_corpus(const ParallelText& text, const Tokenizer& tokenizer);
// Splits the word tokens of both sides into BPE pieces, as Tokenizer::tokenize with that BPE would.
class Bpe;
void segment_corpus(TokenizedCorpus& text, const Bpe& bpe);
// data.bpe_merges: learns `merges` joint merges on both sides' words and splits the text with them; null (and
// the text unchanged) when `merges` is 0.
std::shared_ptr<const Bpe> learn_subwords(TokenizedCorpus& text, int64_t merges);

struct Example {
  std::vector<int64_t> src;  // ids, without <s> / </s>
  std::vector<int64_t> tgt;  // ids, without <s> / </s>
  int64_t line = 0;          // 1-based line in the files
};

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
  std::vector<Example> examples;
  CorpusStats stats;
};

// max_len <= 0 keeps every pair (use it for test sets that must stay aligned with references).
Corpus encode_corpus(const TokenizedCorpus& text, const Vocabulary& src_vocab, const Vocabulary& tgt_vocab,
                     int64_t max_len);

}  // namespace luong::nmt
