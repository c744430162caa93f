#include "models/nmt/data/corpus.h"

#include <cstdio>
#include <limits>
#include <optional>
#include <unordered_map>

#include "framework/core/error.h"
#include "framework/core/unique_fd.h"
#include "framework/io/read_file.h"
#include "models/nmt/data/bpe.h"
#include "models/nmt/data/line_stream.h"

namespace luong::nmt {
namespace {

std::string percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// A file's lines as LineStream reads them, with the messages of read_lines (text_reader.h).
class FileLines {
 public:
  explicit FileLines(const std::string& path)
      : fd_(open_file_for_reading(path, "file")), lines_(fd_.fd, str("file '", path, "'"), "file") {}
  std::optional<std::string> next() { return lines_.next(); }

 private:
  UniqueFd fd_;
  LineStream lines_;
};

// Appends a line's tokens to a side.
void add_sentence(const Tokenizer& words, const std::string& line, TokenTable& table, TokenizedSide& side) {
  for (std::string& token : words.tokenize(line)) side.push_token(table.intern(std::move(token)));
  side.end_sentence();
}

// A sentence's vocabulary ids, through a table from token numbers to ids; counts the <unk>s.
void encode_sentence(std::span<const int32_t> tokens, const std::vector<int32_t>& vocab_id_of,
                     std::vector<int32_t>& ids, int64_t& unk) {
  ids.resize(tokens.size());
  for (size_t k = 0; k < tokens.size(); ++k) {
    ids[k] = vocab_id_of[static_cast<size_t>(tokens[k])];
    unk += ids[k] == Vocabulary::kUnk;
  }
}

}  // namespace

std::vector<std::string> TokenizedCorpus::strings(const TokenizedSide& side, size_t i) const {
  std::vector<std::string> out;
  for (int32_t t : side[i]) out.push_back(tokens.text(t));
  return out;
}

TokenizedCorpus tokenize_corpus(ParallelText text, const Tokenizer& tokenizer) {
  return tokenize_corpus(std::move(text), tokenizer.options(), Subwords::joint(tokenizer.bpe()));
}

TokenizedCorpus tokenize_corpus(ParallelText text, const TokenizerOptions& options, const Subwords& subwords) {
  // Words first, then the subword split of each distinct word once (segment_corpus).
  const Tokenizer words(options);
  TokenizedCorpus out;
  out.lines = text.lines;
  out.empty_skipped = text.empty_skipped;
  out.line_numbers = std::move(text.line_numbers);
  for (auto [lines, side] : {std::pair{&text.src, &out.src}, std::pair{&text.tgt, &out.tgt}}) {
    side->reserve(lines->size(), 0);
    for (std::string& line : *lines) {
      add_sentence(words, line, out.tokens, *side);
      std::string().swap(line);  // released now, not when the whole text is done
    }
  }
  segment_corpus(out, subwords);
  return out;
}

TokenizedCorpus tokenize_files(const std::string& src_path, const std::string& tgt_path, const Tokenizer& tokenizer) {
  return tokenize_files(src_path, tgt_path, tokenizer.options(), Subwords::joint(tokenizer.bpe()));
}

TokenizedCorpus tokenize_files(const std::string& src_path, const std::string& tgt_path,
                               const TokenizerOptions& options, const Subwords& subwords) {
  const Tokenizer words(options);
  FileLines src(src_path), tgt(tgt_path);
  TokenizedCorpus out;
  for (;;) {
    std::optional<std::string> s = src.next(), t = tgt.next();
    if (!s || !t) {
      if (s || t) {  // counted to the end of the longer file, as read_parallel says it
        int64_t src_lines = out.lines + (s ? 1 : 0), tgt_lines = out.lines + (t ? 1 : 0);
        for (FileLines* rest : {&src, &tgt})
          while (rest->next()) ++(rest == &src ? src_lines : tgt_lines);
        LUONG_FAIL("parallel corpus: '", src_path, "' has ", src_lines, " lines but '", tgt_path, "' has ", tgt_lines,
                   " lines (files must be line-aligned)");
      }
      break;
    }
    ++out.lines;
    if (is_blank_line(*s) || is_blank_line(*t)) {
      ++out.empty_skipped;
      continue;
    }
    add_sentence(words, *s, out.tokens, out.src);
    add_sentence(words, *t, out.tokens, out.tgt);
    out.line_numbers.push_back(out.lines);
  }
  segment_corpus(out, subwords);
  return out;
}

namespace {

// The pieces (as token numbers) of each of the table's first `types` tokens that `sides` use (all of them when
// `sides` is empty): each distinct token is split once; the table keeps the (now unused) whole words.
std::vector<std::vector<int32_t>> pieces_of_tokens(TokenTable& table, int32_t types, const Bpe& bpe,
                                                   const std::vector<const TokenizedSide*>& sides) {
  std::vector<char> used(static_cast<size_t>(types), sides.empty());
  for (const TokenizedSide* side : sides)
    for (int32_t t : side->all_tokens()) used[static_cast<size_t>(t)] = 1;
  std::vector<std::vector<int32_t>> pieces_of(static_cast<size_t>(types));
  std::vector<std::string> pieces;
  for (int32_t t = 0; t < types; ++t) {
    if (!used[static_cast<size_t>(t)]) continue;
    pieces.clear();
    bpe.segment(table.text(t), pieces);
    for (std::string& piece : pieces) pieces_of[static_cast<size_t>(t)].push_back(table.intern(std::move(piece)));
  }
  return pieces_of;
}

}  // namespace

void segment_corpus(TokenizedCorpus& text, const Subwords& subwords) {
  if (!subwords.any()) return;
  // Only the word types before splitting are split: pieces the first side's split adds are not words.
  const int32_t types = text.tokens.size();
  std::vector<std::vector<int32_t>> src_pieces, tgt_pieces;
  // Per side, a side's merges split only its own words (a German word through English merges would add pieces
  // nothing uses to the table).
  const bool joint = subwords.is_joint();
  using Sides = std::vector<const TokenizedSide*>;
  if (subwords.src)
    src_pieces = pieces_of_tokens(text.tokens, types, *subwords.src, joint ? Sides{} : Sides{&text.src});
  if (subwords.tgt && !joint) tgt_pieces = pieces_of_tokens(text.tokens, types, *subwords.tgt, Sides{&text.tgt});
  const std::vector<std::vector<int32_t>>* src_split = &src_pieces;
  const std::vector<std::vector<int32_t>>* tgt_split = joint ? &src_pieces : &tgt_pieces;
  for (auto [side, pieces_of] : {std::pair{&text.src, src_split}, std::pair{&text.tgt, tgt_split}}) {
    if (pieces_of->empty()) continue;  // that side stays in words
    size_t n = 0;
    for (int32_t t : side->all_tokens()) n += (*pieces_of)[static_cast<size_t>(t)].size();
    TokenizedSide split;
    split.reserve(side->size(), n);
    for (size_t i = 0; i < side->size(); ++i) {
      for (int32_t t : (*side)[i])
        for (int32_t piece : (*pieces_of)[static_cast<size_t>(t)]) split.push_token(piece);
      split.end_sentence();
    }
    *side = std::move(split);
  }
}

std::unordered_map<std::string, int64_t> count_tokens(const TokenizedCorpus& text,
                                                      const std::vector<const TokenizedSide*>& sides) {
  std::vector<int64_t> count_of(static_cast<size_t>(text.tokens.size()), 0);
  for (const TokenizedSide* side : sides)
    for (int32_t t : side->all_tokens()) ++count_of[static_cast<size_t>(t)];
  std::unordered_map<std::string, int64_t> counts;
  for (int32_t t = 0; t < text.tokens.size(); ++t)
    if (count_of[static_cast<size_t>(t)] > 0) counts.emplace(text.tokens.text(t), count_of[static_cast<size_t>(t)]);
  return counts;
}

std::shared_ptr<const Bpe> learn_subwords(TokenizedCorpus& text, int64_t merges) {
  SubwordSettings joint;
  joint.merges = merges;
  std::string log_line;
  return run_subwords(text, joint, log_line).src;
}

namespace {

std::string learned_merges(const Bpe& bpe, int64_t asked) {
  return str(bpe.merges(), " merges", bpe.merges() < asked ? " (no pair left twice)" : "");
}

std::shared_ptr<const Bpe> read_merges_file(const std::string& path, std::string& log_part) {
  int64_t repeats = 0;
  auto bpe = std::make_shared<const Bpe>(Bpe::read_codes(path, repeats));
  log_part = str(bpe->merges(), " merges from ", path,
                 repeats ? str(" (", repeats, " repeated pairs skipped: only the first of each applies)") : "");
  return bpe;
}

}  // namespace

Subwords run_subwords(TokenizedCorpus& text, const SubwordSettings& s, std::string& log_line) {
  log_line.clear();
  Subwords out;
  if (!s.codes.empty() && !s.codes_tgt.empty()) {
    std::string src_log, tgt_log;
    out.src = read_merges_file(s.codes, src_log);
    out.tgt = read_merges_file(s.codes_tgt, tgt_log);
    log_line = str("bpe per side: source ", src_log, ", target ", tgt_log);
  } else if (!s.codes.empty()) {
    std::string part;
    out = Subwords::joint(read_merges_file(s.codes, part));
    log_line = "bpe: " + part;
  } else if (s.merges > 0 && s.joint) {
    out = Subwords::joint(
        std::make_shared<const Bpe>(Bpe::learn_from_counts(count_tokens(text, {&text.src, &text.tgt}), s.merges)));
    log_line = "bpe: " + learned_merges(*out.src, s.merges);
  } else if (s.merges > 0) {
    // Each side's merges from its own words' counts: the same learner, fed one side.
    out.src = std::make_shared<const Bpe>(Bpe::learn_from_counts(count_tokens(text, text.src), s.merges));
    out.tgt = std::make_shared<const Bpe>(Bpe::learn_from_counts(count_tokens(text, text.tgt), s.merges));
    log_line = str("bpe per side: source ", learned_merges(*out.src, s.merges), ", target ",
                   learned_merges(*out.tgt, s.merges));
  }
  segment_corpus(text, out);
  return out;
}

Corpus encode_corpus(const TokenizedCorpus& text, const Vocabulary& src_vocab, const Vocabulary& tgt_vocab,
                     int64_t max_len) {
  // One vocabulary lookup per distinct token, not per token.
  LUONG_CHECK(src_vocab.size() <= std::numeric_limits<int32_t>::max() &&
                  tgt_vocab.size() <= std::numeric_limits<int32_t>::max(),
              "a vocabulary of more than 2^31 - 1 tokens");
  std::vector<int32_t> src_id_of(static_cast<size_t>(text.tokens.size())), tgt_id_of(src_id_of.size());
  for (int32_t t = 0; t < text.tokens.size(); ++t) {
    src_id_of[static_cast<size_t>(t)] = static_cast<int32_t>(src_vocab.id(text.tokens.text(t)));
    tgt_id_of[static_cast<size_t>(t)] = static_cast<int32_t>(tgt_vocab.id(text.tokens.text(t)));
  }
  Corpus c;
  c.stats.lines = text.lines;
  c.stats.empty_skipped = text.empty_skipped;
  c.examples.reserve(text.src.size(), static_cast<size_t>(text.src.tokens() + text.tgt.tokens()));
  std::vector<int32_t> src, tgt;
  for (size_t i = 0; i < text.src.size(); ++i) {
    const auto ns = static_cast<int64_t>(text.src[i].size()), nt = static_cast<int64_t>(text.tgt[i].size());
    if (max_len > 0 && (ns > max_len || nt > max_len)) {
      ++c.stats.too_long_skipped;
      continue;
    }
    encode_sentence(text.src[i], src_id_of, src, c.stats.src_unk);
    encode_sentence(text.tgt[i], tgt_id_of, tgt, c.stats.tgt_unk);
    c.examples.push_back(src, tgt, i < text.line_numbers.size() ? text.line_numbers[i] : static_cast<int64_t>(i) + 1);
    c.stats.src_tokens += ns;
    c.stats.tgt_tokens += nt;
  }
  // Not shrunk to fit: the pairs over max_len leave little room, and a shrink would copy every id.
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
