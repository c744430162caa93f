// Minimal UTF-8 handling for the tokenizer and the corpus reader: validation with the offending byte offset,
// decoding to code points, encoding back, and a simple lowercase mapping.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace luong::nmt {

// Byte offset of the first byte that does not start a valid UTF-8 sequence (overlong forms, surrogates and
// values above U+10FFFF are invalid), or -1 when `s` is valid.
int64_t utf8_invalid_offset(std::string_view s);

// Code points of a valid UTF-8 string (call utf8_invalid_offset first; invalid input throws).
std::vector<char32_t> utf8_decode(std::string_view s);
void utf8_append(std::string& out, char32_t cp);

// Simple one-to-one lowercase for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic capitals (what English,
// German and French text needs); other code points (including ß, which has no single uppercase) are unchanged.
char32_t to_lower(char32_t cp);
std::string utf8_lower(std::string_view s);

}  // namespace luong::nmt
