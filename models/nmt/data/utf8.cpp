#include "models/nmt/data/utf8.h"

#include "framework/core/error.h"

namespace luong::nmt {

std::vector<char32_t> utf8_decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  char32_t cp = 0;
  while (i < s.size()) {
    const int len = utf8_sequence_length(s, i, &cp);
    if (len == 0) LUONG_FAIL("invalid UTF-8 at byte offset ", i);
    out.push_back(cp);
    i += static_cast<size_t>(len);
  }
  return out;
}

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

char32_t to_lower(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c + 32;
  if (c < 0xC0) return c;
  if (c <= 0xDE) return c == 0xD7 ? c : c + 32;  // À..Þ except ×
  if (c >= 0x100 && c <= 0x17F) {
    // Latin Extended-A pairs capitals with the next code point, except in the ranges below where the pairs
    // start on odd code points; İ (U+0130) and ĸ/ŉ/ſ have no simple pair.
    if (c == 0x130 || c == 0x138 || c == 0x149 || c == 0x17F) return c;
    const bool odd_pairs = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_pairs) return (c % 2 == 1) ? c + 1 : c;
    if (c == 0x178) return 0xFF;  // Ÿ
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;  // Greek capitals
  if (c >= 0x410 && c <= 0x42F) return c + 32;                // Cyrillic А..Я
  if (c >= 0x400 && c <= 0x40F) return c + 80;                // Cyrillic Ѐ..Џ
  return c;
}

std::string utf8_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : utf8_decode(s)) utf8_append(out, to_lower(cp));
  return out;
}

}  // namespace luong::nmt
