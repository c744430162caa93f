#include "models/nmt/bleu_tokenizer.h"

#include <cstdint>

namespace luong::bleu {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// mteval-v13a's "language-dependent" class: ASCII punctuation and symbols except ' , - . (the ranges
// { to ~, [ to `, space to &, ( to +, : to @, and /). Apostrophes, commas, periods and dashes have their
// own rules below.
bool is_split_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0;
  for (size_t at; (at = s.find(from, start)) != std::string::npos; start = at + from.size()) {
    out.append(s, start, at - start);
    out.append(to);
  }
  if (start == 0) return;
  out.append(s, start, std::string::npos);
  s = std::move(out);
}

// Length of the UTF-8 sequence at s[i] if it encodes a Python whitespace code point, else 0.
size_t whitespace_at(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20)) return 1;
  if (c == 0xC2 && (b(1) == 0x85 || b(1) == 0xA0)) return 2;                    // U+0085, U+00A0
  if (c == 0xE1 && b(1) == 0x9A && b(2) == 0x80) return 3;                       // U+1680
  if (c == 0xE2 && b(1) == 0x80 && ((b(2) >= 0x80 && b(2) <= 0x8A) || b(2) == 0xA8 || b(2) == 0xA9 || b(2) == 0xAF))
    return 3;                                                                     // U+2000-200A, 2028, 2029, 202F
  if (c == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;                       // U+205F
  if (c == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;                       // U+3000
  return 0;
}

// Python's re.sub over a two-character pattern: scan left to right, and after a match resume right after
// it (matches never overlap). Working on bytes is equivalent for these patterns because every byte of a
// multi-byte UTF-8 character is neither a digit nor '.', ',' or '-'.
template <class Match, class Emit>
std::string substitute_pairs(const std::string& s, Match match, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> split_whitespace(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  for (size_t i = 0; i < text.size();) {
    if (const size_t n = whitespace_at(text, i)) {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
      i += n;
    } else {
      current += text[i++];
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

std::string rstrip_whitespace(std::string_view text) {
  size_t end = 0;  // one past the last byte of the last non-whitespace character
  for (size_t i = 0; i < text.size();) {
    if (const size_t n = whitespace_at(text, i)) {
      i += n;
    } else {
      end = ++i;
    }
  }
  return std::string(text.substr(0, end));
}

std::string tokenize_13a(std::string_view input) {
  std::string line(input);
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    // One full pass per entity, in mteval's order ("&amp;lt;" therefore becomes "<").
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }
  std::string padded;
  padded.reserve(line.size() * 2 + 2);
  padded += ' ';
  for (char c : line) {
    if (is_split_symbol(c)) {
      padded += ' ';
      padded += c;
      padded += ' ';
    } else {
      padded += c;
    }
  }
  padded += ' ';
  auto period_or_comma = [](char c) { return c == '.' || c == ','; };
  // Period and comma unless preceded by a digit: "x." -> "x . "
  std::string s = substitute_pairs(
      padded, [&](char a, char b) { return !is_digit(a) && period_or_comma(b); },
      [](std::string& o, char a, char b) { o.append({a, ' ', b, ' '}); });
  // Period and comma unless followed by a digit: ".x" -> " . x"
  s = substitute_pairs(
      s, [&](char a, char b) { return period_or_comma(a) && !is_digit(b); },
      [](std::string& o, char a, char b) { o.append({' ', a, ' ', b}); });
  // Dash after a digit: "3-" -> "3 - "
  s = substitute_pairs(
      s, [](char a, char b) { return is_digit(a) && b == '-'; },
      [](std::string& o, char a, char b) { o.append({a, ' ', b, ' '}); });
  std::string out;
  for (const auto& tok : split_whitespace(s)) {
    if (!out.empty()) out += ' ';
    out += tok;
  }
  return out;
}

}  // namespace luong::bleu
