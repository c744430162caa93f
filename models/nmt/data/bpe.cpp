#include "models/nmt/data/bpe.h"

#include <algorithm>
#include <limits>
#include <queue>

#include "framework/core/error.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/utf8.h"

namespace luong::nmt {
namespace {

// A word's code points as strings, the last one marked as the end of the word.
std::vector<std::string> initial_symbols(const std::string& word) {
  std::vector<std::string> out;
  for (const char32_t cp : utf8_decode(word)) {
    out.emplace_back();
    utf8_append(out.back(), cp);
  }
  if (!out.empty()) out.back() += Bpe::kEndOfWord;
  return out;
}

using PairKey = uint64_t;
PairKey pair_key(int32_t a, int32_t b) { return (uint64_t{static_cast<uint32_t>(a)} << 32) | static_cast<uint32_t>(b); }
int32_t left_of(PairKey k) { return static_cast<int32_t>(k >> 32); }
int32_t right_of(PairKey k) { return static_cast<int32_t>(k & 0xFFFFFFFFu); }

// The merge loop over word types with symbol ids. Each merge touches only the word types that hold the pair
// (found through `where`), and the most frequent pair comes from a heap whose stale entries (a count that
// has changed since) are skipped when they surface: a merge costs what it changes, not a pass over the text.
class Learner {
 public:
  explicit Learner(const std::vector<std::pair<std::string, int64_t>>& word_counts) {
    for (const auto& [word, count] : word_counts) {
      std::vector<int32_t> syms;
      for (const std::string& s : initial_symbols(word)) syms.push_back(intern(s));
      const auto w = static_cast<int32_t>(words_.size());
      for (size_t i = 0; i + 1 < syms.size(); ++i) {
        const PairKey p = pair_key(syms[i], syms[i + 1]);
        counts_[p] += count;
        where_[p].push_back(w);
      }
      words_.push_back(std::move(syms));
      freq_.push_back(count);
    }
    stamp_.assign(words_.size(), -1);
    for (const auto& [p, c] : counts_) heap_.push({c, p});
  }

  // The next merge, or false when no pair occurs at least twice.
  bool next(std::string& left, std::string& right) {
    while (!heap_.empty()) {
      const Entry top = heap_.top();
      const auto it = counts_.find(top.pair);
      if (it == counts_.end() || it->second != top.count) {  // stale
        heap_.pop();
        continue;
      }
      if (top.count < 2) return false;
      heap_.pop();
      left = names_[static_cast<size_t>(left_of(top.pair))];
      right = names_[static_cast<size_t>(right_of(top.pair))];
      merge(top.pair);
      return true;
    }
    return false;
  }

 private:
  struct Entry {
    int64_t count;
    PairKey pair;
  };
  // The heap's order: a higher count first, then the pair whose (left, right) strings compare smaller.
  struct Lower {
    const Learner* self;
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      const auto& n = self->names_;
      const std::string& xl = n[static_cast<size_t>(left_of(x.pair))];
      const std::string& yl = n[static_cast<size_t>(left_of(y.pair))];
      if (xl != yl) return xl > yl;
      return n[static_cast<size_t>(right_of(x.pair))] > n[static_cast<size_t>(right_of(y.pair))];
    }
  };

  int32_t intern(const std::string& s) {
    const auto [it, added] = ids_.emplace(s, static_cast<int32_t>(names_.size()));
    if (added) names_.push_back(s);
    return it->second;
  }

  void merge(PairKey p) {
    const int32_t a = left_of(p), b = right_of(p);
    const int32_t c = intern(names_[static_cast<size_t>(a)] + names_[static_cast<size_t>(b)]);
    ++merge_count_;
    std::vector<int32_t> holders = std::move(where_[p]);
    where_.erase(p);
    std::vector<PairKey> changed;
    for (const int32_t w : holders) {
      if (stamp_[static_cast<size_t>(w)] == merge_count_) continue;  // listed twice
      stamp_[static_cast<size_t>(w)] = merge_count_;
      std::vector<int32_t>& syms = words_[static_cast<size_t>(w)];
      bool holds = false;
      for (size_t i = 0; i + 1 < syms.size() && !holds; ++i) holds = syms[i] == a && syms[i + 1] == b;
      if (!holds) continue;  // an earlier merge took the pair from this word
      const int64_t f = freq_[static_cast<size_t>(w)];
      for (size_t i = 0; i + 1 < syms.size(); ++i) {
        const PairKey q = pair_key(syms[i], syms[i + 1]);
        counts_[q] -= f;
        changed.push_back(q);
      }
      std::vector<int32_t> merged;
      for (size_t i = 0; i < syms.size(); ++i) {
        if (i + 1 < syms.size() && syms[i] == a && syms[i + 1] == b) {
          merged.push_back(c);
          ++i;
        } else {
          merged.push_back(syms[i]);
        }
      }
      for (size_t i = 0; i + 1 < merged.size(); ++i) {
        const PairKey q = pair_key(merged[i], merged[i + 1]);
        counts_[q] += f;
        changed.push_back(q);
        if (merged[i] == c || merged[i + 1] == c) where_[q].push_back(w);  // the word's other pairs are listed
      }
      syms = std::move(merged);
    }
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (const PairKey q : changed) {
      const auto it = counts_.find(q);
      if (it->second > 0) {
        heap_.push({it->second, q});
      } else {
        counts_.erase(it);
      }
    }
  }

  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::vector<int32_t>> words_;
  std::vector<int64_t> freq_;
  std::vector<int64_t> stamp_;  // the merge that last visited each word type
  int64_t merge_count_ = 0;
  std::unordered_map<PairKey, int64_t> counts_;
  std::unordered_map<PairKey, std::vector<int32_t>> where_;  // word types that got the pair (some may have lost it)
  std::priority_queue<Entry, std::vector<Entry>, Lower> heap_{Lower{this}};
};

std::string merge_text(const std::string& left, const std::string& right) { return left + ' ' + right; }

}  // namespace

bool is_bpe_word(std::string_view token) {
  if (token.empty() || token.find(kJoiner) != std::string_view::npos) return false;
  size_t code_points = 0;
  for (const char byte : token) code_points += (static_cast<unsigned char>(byte) & 0xC0) != 0x80;
  if (code_points > kMaxWordLength) return false;
  char32_t first = 0;
  LUONG_CHECK(utf8_sequence_length(token, 0, &first) > 0, "bpe: token '", token, "' is not UTF-8");
  return !is_punct_char(first);
}

namespace {
// A piece that segment() cut from the front or middle of a word: a word piece with the joiner after it.
bool continues_word(const std::string& token) {
  return token.size() > kJoiner.size() && token.ends_with(kJoiner) &&
         is_bpe_word(std::string_view(token).substr(0, token.size() - kJoiner.size()));
}
}  // namespace

std::string whole_word_at(const std::vector<std::string>& tokens, size_t pos) {
  const auto word_piece = [](const std::string& t) { return is_bpe_word(t) || continues_word(t); };
  if (!word_piece(tokens[pos])) return tokens[pos];
  size_t begin = pos, last = pos;
  while (begin > 0 && continues_word(tokens[begin - 1])) --begin;
  while (continues_word(tokens[last]) && last + 1 < tokens.size() && word_piece(tokens[last + 1])) ++last;
  if (begin == last) return tokens[pos];
  std::string word;
  for (size_t i = begin; i <= last; ++i)
    word += continues_word(tokens[i]) ? tokens[i].substr(0, tokens[i].size() - kJoiner.size()) : tokens[i];
  return word;
}

bool same_subwords(const Bpe* a, const Bpe* b) {
  if (!a || !b) return a == b;
  return a->to_list() == b->to_list();
}

std::string describe_subwords(const Bpe* bpe) {
  return bpe ? std::to_string(bpe->merges()) + " BPE merges" : std::string("whole words");
}

Bpe Bpe::learn(const std::vector<const std::vector<std::vector<std::string>>*>& texts, int64_t max_merges) {
  // Hashed while counting (a WMT-sized corpus has hundreds of millions of tokens).
  std::unordered_map<std::string, int64_t> counts;
  for (const auto* text : texts)
    for (const auto& sentence : *text)
      for (const std::string& token : sentence) ++counts[token];
  return learn_from_counts(counts, max_merges);
}

Bpe Bpe::learn_from_counts(const std::unordered_map<std::string, int64_t>& token_counts, int64_t max_merges) {
  LUONG_CHECK(max_merges >= 0, "bpe: the number of merges must be >= 0, got ", max_merges);
  // Sorted: the word types' order does not change the merges, but a fixed one keeps every run's work the same.
  std::vector<std::pair<std::string, int64_t>> word_counts;
  for (const auto& [token, count] : token_counts)
    if (is_bpe_word(token)) word_counts.emplace_back(token, count);
  std::sort(word_counts.begin(), word_counts.end());
  Bpe out;
  Learner learner(word_counts);
  std::string left, right;
  while (out.merges() < max_merges && learner.next(left, right)) out.add_merge(left, right);
  return out;
}

std::pair<std::string, std::string> Bpe::parse_merge(const std::string& item, const std::string& where) {
  const size_t space = item.find(' ');
  if (space == std::string::npos || space == 0 || space + 1 == item.size() || item.find(' ', space + 1) != item.npos)
    LUONG_FAIL(where, ": '", item, "': expected two symbols separated by one space");
  // Only a word's last symbol carries the end mark, and it is never the left one of a pair.
  if (std::string_view(item).substr(0, space).ends_with(kEndOfWord))
    LUONG_FAIL(where, ": '", item, "': its left symbol ends with ", kEndOfWord);
  return {item.substr(0, space), item.substr(space + 1)};
}

Bpe Bpe::from_list(const std::vector<std::string>& merges) {
  Bpe out;
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string where = str("bpe merge ", i + 1);
    auto [left, right] = parse_merge(merges[i], where);
    if (out.rank_.count(merges[i])) LUONG_FAIL(where, ": '", merges[i], "' repeats an earlier merge");
    out.add_merge(std::move(left), std::move(right));
  }
  return out;
}

Bpe Bpe::read_codes(const std::string& path, int64_t& repeats) {
  const std::vector<std::string> lines = read_lines(path);  // errors name the file; UTF-8 checked
  size_t first = 0;
  if (!lines.empty() && lines[0].starts_with("#version")) {
    // Version 0.1 wrote the end-of-word mark as a symbol of its own, and its codes split words differently.
    if (lines[0] != "#version: 0.2")
      LUONG_FAIL("file '", path, "' line 1: '", lines[0], "': only version 0.2 codes of subword-nmt are read (the ",
                 "end-of-word mark joined to a word's last symbol), or a run's bpe.merges.txt");
    first = 1;
  }
  Bpe out;
  repeats = 0;
  for (size_t i = first; i < lines.size(); ++i) {
    auto [left, right] = parse_merge(lines[i], str("file '", path, "' line ", i + 1));
    // subword-nmt's codes may repeat a pair; its apply-bpe uses the first, which is all segment() ever uses.
    if (out.rank_.count(lines[i])) {
      ++repeats;
      continue;
    }
    out.add_merge(std::move(left), std::move(right));
  }
  LUONG_CHECK(out.merges() > 0, "file '", path, "' holds no BPE merges (expected one \"left right\" pair per line, ",
              "as in a run's bpe.merges.txt)");
  return out;
}

std::vector<std::string> Bpe::to_list() const {
  std::vector<std::string> out;
  out.reserve(merges_.size());
  for (const auto& [l, r] : merges_) out.push_back(merge_text(l, r));
  return out;
}

void Bpe::add_merge(std::string left, std::string right) {
  rank_.emplace(merge_text(left, right), static_cast<int64_t>(merges_.size()));
  merges_.emplace_back(std::move(left), std::move(right));
}

void Bpe::segment(const std::string& token, std::vector<std::string>& out) const {
  if (!is_bpe_word(token)) {
    out.push_back(token);
    return;
  }
  std::vector<std::string> syms = initial_symbols(token);
  while (syms.size() > 1) {
    int64_t best = std::numeric_limits<int64_t>::max();
    size_t at = 0;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      const auto it = rank_.find(merge_text(syms[i], syms[i + 1]));
      if (it != rank_.end() && it->second < best) best = it->second, at = i;
    }
    if (best == std::numeric_limits<int64_t>::max()) break;
    const std::string left = syms[at], right = syms[at + 1];
    std::vector<std::string> merged;
    for (size_t i = 0; i < syms.size(); ++i) {
      if (i + 1 < syms.size() && syms[i] == left && syms[i + 1] == right) {
        merged.push_back(left + right);
        ++i;
      } else {
        merged.push_back(std::move(syms[i]));
      }
    }
    syms = std::move(merged);
  }
  syms.back().resize(syms.back().size() - kEndOfWord.size());
  for (size_t i = 0; i + 1 < syms.size(); ++i) syms[i] += kJoiner;
  for (std::string& s : syms) out.push_back(std::move(s));
}

}  // namespace luong::nmt
