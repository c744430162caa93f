#include "framework/core/utf8.h"

namespace luong {

int utf8_sequence_length(std::string_view s, size_t i, char32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned b0 = byte(i);
  if (b0 < 0x80) {
    if (cp) *cp = b0;
    return 1;
  }
  int len = 0;
  char32_t value = 0, min = 0;
  if (b0 >= 0xC0 && b0 <= 0xDF)
    len = 2, value = b0 & 0x1F, min = 0x80;
  else if (b0 >= 0xE0 && b0 <= 0xEF)
    len = 3, value = b0 & 0x0F, min = 0x800;
  else if (b0 >= 0xF0 && b0 <= 0xF7)
    len = 4, value = b0 & 0x07, min = 0x10000;
  else
    return 0;  // a continuation byte, or a lead byte no code point needs
  if (i + static_cast<size_t>(len) > s.size()) return 0;
  for (int k = 1; k < len; ++k) {
    const unsigned b = byte(i + static_cast<size_t>(k));
    if ((b & 0xC0) != 0x80) return 0;
    value = (value << 6) | (b & 0x3F);
  }
  // Overlong forms (C0 AF for '/'), the UTF-16 surrogates and values above Unicode's range are not UTF-8.
  if (value < min || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  if (cp) *cp = value;
  return len;
}

int64_t utf8_invalid_offset(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int len = utf8_sequence_length(s, i);
    if (len == 0) return static_cast<int64_t>(i);
    i += static_cast<size_t>(len);
  }
  return -1;
}

}  // namespace luong
