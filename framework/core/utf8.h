// UTF-8 validation, the one decoder every text check in luong uses (corpora, configs, sweep specs, BLEU input,
// error messages): a byte sequence is valid when it is the shortest form of a code point up to U+10FFFF that is
// not a surrogate (RFC 3629).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace luong {

// Length (1 to 4) of the valid UTF-8 sequence that starts at s[i], storing its code point in *cp when cp is not
// null; 0 when the bytes there are not one (a stray continuation byte, an overlong form, a surrogate, a value
// above U+10FFFF, a sequence cut short by the end of s).
int utf8_sequence_length(std::string_view s, size_t i, char32_t* cp = nullptr);

// Byte offset of the first byte that does not start a valid sequence, or -1 when all of s is valid UTF-8.
int64_t utf8_invalid_offset(std::string_view s);

}  // namespace luong
