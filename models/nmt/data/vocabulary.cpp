#include "models/nmt/data/vocabulary.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include "framework/core/error.h"
#include "framework/core/utf8.h"

namespace luong::nmt {

const std::vector<std::string>& Vocabulary::specials() {
  static const std::vector<std::string> s = {"<pad>", "<unk>", "<s>", "</s>"};
  return s;
}

Vocabulary::Vocabulary() {
  for (const auto& s : specials()) push(s, 0);
}

void Vocabulary::push(const std::string& token, int64_t count) {
  LUONG_CHECK(!token.empty(), "vocabulary: empty token at id ", tokens_.size());
  LUONG_CHECK(token.find_first_of("\t\n\r") == std::string::npos, "vocabulary: token '", token,
              "' contains a tab or newline");
  LUONG_CHECK(!index_.count(token), "vocabulary: duplicate token '", token, "' at id ", tokens_.size());
  index_[token] = static_cast<int64_t>(tokens_.size());
  tokens_.push_back(token);
  counts_.push_back(count);
}

Vocabulary Vocabulary::build(const std::unordered_map<std::string, int64_t>& counts, int64_t max_size,
                             int64_t min_freq) {
  LUONG_CHECK(max_size <= 0 || max_size > kNumSpecials, "vocabulary: max size ", max_size,
              " leaves no room beyond the ", kNumSpecials, " specials");
  std::vector<std::pair<std::string, int64_t>> items;
  for (const auto& [tok, n] : counts) {
    const bool special = std::find(specials().begin(), specials().end(), tok) != specials().end();
    if (n >= min_freq && !special) items.emplace_back(tok, n);
  }
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  Vocabulary v;
  for (const auto& [tok, n] : items) {
    if (max_size > 0 && v.size() >= max_size) break;
    v.push(tok, n);
  }
  return v;
}

Vocabulary Vocabulary::build(const std::vector<std::vector<std::string>>& sentences, int64_t max_size,
                             int64_t min_freq) {
  std::unordered_map<std::string, int64_t> counts;
  for (const auto& s : sentences)
    for (const auto& t : s) ++counts[t];
  return build(counts, max_size, min_freq);
}

Vocabulary Vocabulary::from_tokens(const std::vector<std::string>& tokens) {
  LUONG_CHECK(tokens.size() >= static_cast<size_t>(kNumSpecials) &&
                  std::equal(specials().begin(), specials().end(), tokens.begin()),
              "vocabulary: a token list must start with <pad> <unk> <s> </s>");
  Vocabulary v;
  for (size_t i = static_cast<size_t>(kNumSpecials); i < tokens.size(); ++i) {
    // Tokens come from UTF-8 text; one that is not (an edited checkpoint) would reach the output as raw bytes.
    if (const int64_t bad = utf8_invalid_offset(tokens[i]); bad >= 0)
      LUONG_FAIL("vocabulary: token ", i, " is not valid UTF-8 (byte ", bad, " of the token)");
    v.push(tokens[i], 0);
  }
  return v;
}

void Vocabulary::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out) LUONG_FAIL("vocabulary file '", path, "' cannot be written: ", std::strerror(errno));
  for (size_t i = 0; i < tokens_.size(); ++i) out << tokens_[i] << '\t' << counts_[i] << '\n';
  out.close();
  if (!out) LUONG_FAIL("vocabulary file '", path, "': write failed");
}

Vocabulary Vocabulary::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) LUONG_FAIL("vocabulary file '", path, "' cannot be read: ", std::strerror(errno));
  std::vector<std::string> tokens;
  std::vector<int64_t> counts;
  std::string line;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    const auto tab = line.rfind('\t');
    int64_t n = 0;
    const char* b = line.data() + (tab == std::string::npos ? 0 : tab + 1);
    const char* e = line.data() + line.size();
    auto [ptr, ec] = std::from_chars(b, e, n);
    if (tab == std::string::npos || tab == 0 || ec != std::errc() || ptr != e || n < 0)
      LUONG_FAIL("vocabulary file '", path, "' line ", lineno, ": expected 'token<TAB>count', got '", line, "'");
    tokens.push_back(line.substr(0, tab));
    counts.push_back(n);
  }
  // A read that fails part-way ends getline like the end of the file: a cut vocabulary must not load.
  if (in.bad())
    LUONG_FAIL("vocabulary file '", path, "' cannot be read: a read failed after ", tokens.size(), " lines");
  Vocabulary v;
  try {
    v = from_tokens(tokens);
  } catch (const Error& err) {
    LUONG_FAIL("vocabulary file '", path, "': ", err.what());
  }
  v.counts_ = std::move(counts);
  return v;
}

int64_t Vocabulary::id(const std::string& token) const {
  auto it = index_.find(token);
  return it == index_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::token(int64_t id) const {
  LUONG_CHECK(id >= 0 && id < size(), "vocabulary: id ", id, " out of range [0, ", size(), ")");
  return tokens_[static_cast<size_t>(id)];
}

std::vector<int64_t> Vocabulary::encode(const std::vector<std::string>& tokens) const {
  std::vector<int64_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back(id(t));
  return ids;
}

std::vector<std::string> Vocabulary::decode(const std::vector<int64_t>& ids) const {
  std::vector<std::string> out;
  for (int64_t i : ids) {
    if (i == kEos) break;
    if (i == kPad || i == kBos) continue;
    out.push_back(token(i));
  }
  return out;
}

}  // namespace luong::nmt
