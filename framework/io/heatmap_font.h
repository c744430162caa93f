// A hand-made 5x7 bitmap font for printable ASCII, for labels in heatmap images.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace luong {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;

// Seven rows, top first; bit 4 is the leftmost column. Code points outside ' '..'~' get a filled box with
// a '?' cut out of it.
const std::array<uint8_t, kGlyphHeight>& glyph(uint32_t code_point);
// The code points of UTF-8 text (each byte of an invalid sequence becomes one unknown code point).
std::vector<uint32_t> decode_utf8(std::string_view text);

}  // namespace luong
