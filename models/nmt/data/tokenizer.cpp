#include "models/nmt/data/tokenizer.h"

#include "models/nmt/data/bpe.h"
#include "models/nmt/data/utf8.h"

namespace luong::nmt {
namespace {

constexpr char32_t kJoinerCp = 0xFFED;
constexpr char32_t kJoinerReplacement = 0x25A0;

bool in(char32_t c, char32_t lo, char32_t hi) { return c >= lo && c <= hi; }

bool starts_with_joiner(const std::string& t) { return t.compare(0, kJoiner.size(), kJoiner) == 0; }
bool ends_with_joiner(const std::string& t) {
  return t.size() >= kJoiner.size() && t.compare(t.size() - kJoiner.size(), kJoiner.size(), kJoiner) == 0;
}

// Splits one whitespace-free chunk into pieces and appends them with joiner marks.
void tokenize_chunk(const std::vector<char32_t>& cps, size_t begin, size_t end, std::vector<std::string>& out) {
  bool prev_punct = false;
  for (size_t i = begin; i < end;) {
    const bool punct = is_punct_char(cps[i]);
    size_t j = i + 1;
    if (punct) {
      while (j < end && cps[j] == cps[i]) ++j;
    } else {
      while (j < end && !is_punct_char(cps[j])) ++j;
    }
    std::string piece;
    for (size_t k = i; k < j; ++k) utf8_append(piece, cps[k]);
    if (i > begin) {
      // Glued to the previous piece: the mark goes on whichever side is punctuation (the left one if both).
      if (prev_punct) out.back() += kJoiner;
      else piece = std::string(kJoiner) + piece;
    }
    out.push_back(std::move(piece));
    prev_punct = punct;
    i = j;
  }
}

}  // namespace

bool is_space_char(char32_t c) {
  return c == U' ' || in(c, 0x09, 0x0D) || c == 0xA0 || c == 0x1680 || in(c, 0x2000, 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_punct_char(char32_t c) {
  if (c < 0x80) {
    const bool alnum = in(c, U'a', U'z') || in(c, U'A', U'Z') || in(c, U'0', U'9');
    return !alnum && !is_space_char(c);
  }
  if (in(c, 0xA1, 0xBF)) return c != 0xAA && c != 0xB5 && c != 0xBA;
  return c == 0xD7 || c == 0xF7 || in(c, 0x2010, 0x2027) || in(c, 0x2030, 0x205E) || in(c, 0x20A0, 0x20CF) ||
         in(c, 0x2190, 0x2BFF) || in(c, 0x3001, 0x303F) || in(c, 0xFF01, 0xFF0F) || in(c, 0xFF1A, 0xFF20) ||
         in(c, 0xFF3B, 0xFF40) || in(c, 0xFF5B, 0xFF65) || in(c, 0x1F000, 0x1FAFF);
}

std::vector<std::string> Tokenizer::tokenize(std::string_view text) const {
  std::vector<char32_t> cps = utf8_decode(text);
  for (char32_t& c : cps) {
    if (c == kJoinerCp) c = kJoinerReplacement;
    if (options_.lowercase) c = to_lower(c);
  }
  std::vector<std::string> out;
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_space_char(cps[i])) ++i;
    size_t j = i;
    while (j < cps.size() && !is_space_char(cps[j])) ++j;
    if (j > i) tokenize_chunk(cps, i, j, out);
    i = j;
  }
  if (!bpe_) return out;
  std::vector<std::string> pieces;
  pieces.reserve(out.size() * 2);
  for (const std::string& token : out) bpe_->segment(token, pieces);
  return pieces;
}

std::string Tokenizer::detokenize(const std::vector<std::string>& tokens,
                                  std::vector<std::pair<size_t, size_t>>* spans) const {
  std::string out;
  if (spans) spans->clear();
  bool glue_next = true;  // no space before the first token
  for (const auto& t : tokens) {
    const bool left = starts_with_joiner(t);
    const bool right = ends_with_joiner(t);
    if (!glue_next && !left) out += ' ';
    // A lone joiner both starts and ends with the mark: it glues both sides and contributes nothing.
    const size_t b = left ? kJoiner.size() : 0;
    const size_t e = right && t.size() >= b + kJoiner.size() ? t.size() - kJoiner.size() : t.size();
    const size_t begin = out.size();
    if (e > b) out.append(t, b, e - b);
    if (spans) spans->emplace_back(begin, out.size());
    glue_next = right;
  }
  return out;
}

}  // namespace luong::nmt
