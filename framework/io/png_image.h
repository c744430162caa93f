// 8-bit RGB images in memory and their PNG files (through libpng's simplified API, no setjmp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace luong {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // (height, width, 3), row-major

  RgbImage() = default;
  RgbImage(int w, int h, uint8_t r, uint8_t g, uint8_t b);  // filled with one colour
  uint8_t* at(int x, int y) { return &pixels[(static_cast<size_t>(y) * width + x) * 3]; }
  const uint8_t* at(int x, int y) const { return &pixels[(static_cast<size_t>(y) * width + x) * 3]; }
  void set(int x, int y, const uint8_t rgb[3]);  // ignores points outside the image
};

// Errors name the file and carry libpng's message.
void write_png(const std::string& path, const RgbImage& image);
RgbImage read_png(const std::string& path);

}  // namespace luong
