#include "models/nmt/data/corpus.h"

#include <cstdio>
#include <unordered_map>

#include "models/nmt/data/bpe.h"

namespace luong::nmt {
namespace {

std::string percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

int64_t count_unk(const std::vector<int64_t>& ids) {
  int64_t n = 0;
  for (int64_t i : ids) n += i == Vocabulary::kUnk;
  return n;
}

}  // namespace

TokenizedCorpus tokenize_corpus(const ParallelText& text, const Tokenizer& tokenizer) {
  // Words first, then the subword split through segment_corpus's cache (the same tokens, computed once per word).
  const Tokenizer words(tokenizer.options());
  TokenizedCorpus out;
  out.lines = text.lines;
  out.empty_skipped = text.empty_skipped;
  out.line_numbers = text.line_numbers;
  out.src.reserve(text.src.size());
  out.tgt.reserve(text.tgt.size());
  for (size_t i = 0; i < text.src.size(); ++i) {
    out.src.push_back(words.tokenize(text.src[i]));
    out.tgt.push_back(words.tokenize(text.tgt[i]));
  }
  if (tokenizer.bpe()) segment_corpus(out, *tokenizer.bpe());
  return out;
}

void segment_corpus(TokenizedCorpus& text, const Bpe& bpe) {
  std::unordered_map<std::string, std::vector<std::string>> pieces_of;  // a corpus repeats its words
  for (auto* side : {&text.src, &text.tgt}) {
    std::vector<const std::vector<std::string>*> split;
    for (std::vector<std::string>& sentence : *side) {
      // The exact size first: a corpus is millions of these vectors, and spare capacity in each added a third
      // to the start-up's peak memory on a large one.
      split.clear();
      size_t n = 0;
      for (const std::string& word : sentence) {
        auto it = pieces_of.find(word);
        if (it == pieces_of.end()) {
          std::vector<std::string> pieces;
          bpe.segment(word, pieces);
          it = pieces_of.emplace(word, std::move(pieces)).first;
        }
        split.push_back(&it->second);
        n += it->second.size();
      }
      std::vector<std::string> out;
      out.reserve(n);
      for (const auto* pieces : split) out.insert(out.end(), pieces->begin(), pieces->end());
      sentence = std::move(out);
    }
  }
}

std::shared_ptr<const Bpe> learn_subwords(TokenizedCorpus& text, int64_t merges) {
  if (merges == 0) return nullptr;
  auto bpe = std::make_shared<const Bpe>(Bpe::learn({&text.src, &text.tgt}, merges));
  segment_corpus(text, *bpe);
  return bpe;
}

Corpus encode_corpus(const TokenizedCorpus& text, const Vocabulary& src_vocab, const Vocabulary& tgt_vocab,
                     int64_t max_len) {
  Corpus c;
  c.stats.lines = text.lines;
  c.stats.empty_skipped = text.empty_skipped;
  for (size_t i = 0; i < text.src.size(); ++i) {
    const auto ns = static_cast<int64_t>(text.src[i].size()), nt = static_cast<int64_t>(text.tgt[i].size());
    if (max_len > 0 && (ns > max_len || nt > max_len)) {
      ++c.stats.too_long_skipped;
      continue;
    }
    Example e{src_vocab.encode(text.src[i]), tgt_vocab.encode(text.tgt[i]),
              i < text.line_numbers.size() ? text.line_numbers[i] : static_cast<int64_t>(i) + 1};
    c.stats.src_tokens += ns;
    c.stats.tgt_tokens += nt;
    c.stats.src_unk += count_unk(e.src);
    c.stats.tgt_unk += count_unk(e.tgt);
    c.examples.push_back(std::move(e));
  }
  c.stats.examples = static_cast<int64_t>(c.examples.size());
  return c;
}

std::string CorpusStats::summary() const {
  return std::to_string(lines) + " lines, " + std::to_string(examples) + " pairs kept, " +
         std::to_string(empty_skipped) + " empty skipped, " + std::to_string(too_long_skipped) +
         " too long skipped; src " + std::to_string(src_tokens) + " tokens (" + percent(src_unk, src_tokens) +
         " unk), tgt " + std::to_string(tgt_tokens) + " tokens (" + percent(tgt_unk, tgt_tokens) + " unk)";
}

}  // namespace luong::nmt
