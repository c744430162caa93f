#include "framework/io/png_image.h"

#include <png.h>

#include <cstring>

#include "framework/core/error.h"

namespace luong {

RgbImage::RgbImage(int w, int h, uint8_t r, uint8_t g, uint8_t b) : width(w), height(h) {
  LUONG_CHECK(w > 0 && h > 0, "image size must be positive, got ", w, "x", h);
  pixels.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < pixels.size(); i += 3) {
    pixels[i] = r;
    pixels[i + 1] = g;
    pixels[i + 2] = b;
  }
}

void RgbImage::set(int x, int y, const uint8_t rgb[3]) {
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  std::memcpy(at(x, y), rgb, 3);
}

void write_png(const std::string& path, const RgbImage& image) {
  LUONG_CHECK(image.pixels.size() == static_cast<size_t>(image.width) * image.height * 3, "png ", path,
              ": pixel buffer does not match ", image.width, "x", image.height);
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.pixels.data(), 0, nullptr))
    LUONG_FAIL("png ", path, ": cannot write: ", png.message);
}

RgbImage read_png(const std::string& path) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str())) LUONG_FAIL("png ", path, ": cannot read: ", png.message);
  png.format = PNG_FORMAT_RGB;
  RgbImage out;
  out.width = static_cast<int>(png.width);
  out.height = static_cast<int>(png.height);
  out.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, out.pixels.data(), 0, nullptr)) {
    const std::string msg = png.message;
    png_image_free(&png);
    LUONG_FAIL("png ", path, ": cannot decode: ", msg);
  }
  return out;
}

}  // namespace luong
