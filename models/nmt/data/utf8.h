// Minimal UTF-8 handling for the tokenizer and the corpus reader: decoding to code points, encoding back, and
// a simple lowercase mapping. Validation is framework/core/utf8.h's (luong::utf8_invalid_offset).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/core/utf8.h"

namespace luong::nmt {

// Code points of a valid UTF-8 string (call utf8_invalid_offset first; invalid input throws).
std::vector<char32_t> utf8_decode(std::string_view s);
void utf8_append(std::string& out, char32_t cp);

// Simple one-to-one lowercase for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic capitals (what English,
// German and French text needs); other code points (including ß, which has no single uppercase) are unchanged.
char32_t to_lower(char32_t cp);
std::string utf8_lower(std::string_view s);

}  // namespace luong::nmt
