#include "framework/io/heatmap.h"

#include <algorithm>
#include <cmath>

#include "framework/io/heatmap_font.h"

namespace luong {
namespace {

constexpr int kPad = 4;
constexpr uint8_t kInk[3] = {0, 0, 0};
constexpr uint8_t kFrame[3] = {160, 160, 160};

int advance(int scale) { return (kGlyphWidth + 1) * scale; }

size_t longest(const std::vector<std::string>& words) {
  size_t n = 0;
  for (const auto& w : words) n = std::max(n, decode_utf8(w).size());
  return n;
}

// Draws glyph pixel (gx, gy) of a character as a scale x scale block; `vertical` rotates the text a
// quarter turn counter-clockwise (reading bottom to top), with (x, y) the bottom-left of the first glyph.
void draw_text(RgbImage& img, const std::string& text, int x, int y, int scale, bool vertical) {
  const auto cps = decode_utf8(text);
  for (size_t k = 0; k < cps.size(); ++k) {
    const auto& rows = glyph(cps[k]);
    const int along = static_cast<int>(k) * advance(scale);
    for (int gy = 0; gy < kGlyphHeight; ++gy) {
      for (int gx = 0; gx < kGlyphWidth; ++gx) {
        if (!((rows[static_cast<size_t>(gy)] >> (kGlyphWidth - 1 - gx)) & 1)) continue;
        for (int dy = 0; dy < scale; ++dy) {
          for (int dx = 0; dx < scale; ++dx) {
            if (vertical) {
              img.set(x + gy * scale + dy, y - along - gx * scale - dx, kInk);
            } else {
              img.set(x + along + gx * scale + dx, y + gy * scale + dy, kInk);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void heatmap_colour(double weight, uint8_t out[3]) {
  const double w = std::clamp(weight, 0.0, 1.0);
  for (int c = 0; c < 3; ++c) out[c] = static_cast<uint8_t>(std::lround(255.0 + (kHeatmapDark[c] - 255.0) * w));
}

HeatmapLayout heatmap_layout(const std::vector<std::string>& src_words, const std::vector<std::string>& tgt_words,
                             const HeatmapOptions& options) {
  LUONG_CHECK(options.cell_size >= 4 && options.cell_size <= 512, "heatmap: cell_size ", options.cell_size,
              " is outside [4, 512]");
  HeatmapLayout l;
  l.cell = options.cell_size;
  l.scale = std::max(1, options.cell_size / 8);
  l.left = kPad + static_cast<int>(longest(tgt_words)) * advance(l.scale) + kPad;
  l.top = kPad + static_cast<int>(longest(src_words)) * advance(l.scale) + kPad;
  l.width = l.left + static_cast<int>(src_words.size()) * l.cell + kPad;
  l.height = l.top + static_cast<int>(tgt_words.size()) * l.cell + kPad;
  return l;
}

RgbImage render_attention_heatmap(const Tensor& weights, const std::vector<std::string>& src_words,
                                  const std::vector<std::string>& tgt_words, const HeatmapOptions& options) {
  LUONG_CHECK(weights.defined() && weights.dim() == 2 && weights.size(0) == static_cast<int64_t>(tgt_words.size()) &&
                  weights.size(1) == static_cast<int64_t>(src_words.size()),
              "heatmap: weights ", shape_str(weights.shape()), " do not match ", tgt_words.size(),
              " target words x ", src_words.size(), " source words (want (tgt_len, src_len))");
  LUONG_CHECK(!tgt_words.empty() && !src_words.empty(), "heatmap: no words to draw");
  const std::vector<double> w = weights.to_vector();
  for (size_t i = 0; i < w.size(); ++i)
    LUONG_CHECK(std::isfinite(w[i]), "heatmap: weight (", i / src_words.size(), ", ", i % src_words.size(),
                ") is not finite");

  const HeatmapLayout l = heatmap_layout(src_words, tgt_words, options);
  RgbImage img(l.width, l.height, 255, 255, 255);
  const int n_src = static_cast<int>(src_words.size()), n_tgt = static_cast<int>(tgt_words.size());
  for (int t = 0; t < n_tgt; ++t) {
    for (int s = 0; s < n_src; ++s) {
      uint8_t rgb[3];
      heatmap_colour(w[static_cast<size_t>(t) * src_words.size() + static_cast<size_t>(s)], rgb);
      for (int y = 0; y < l.cell; ++y)
        for (int x = 0; x < l.cell; ++x) img.set(l.left + s * l.cell + x, l.top + t * l.cell + y, rgb);
    }
  }
  // A frame just outside the matrix keeps white (weight 0) cells readable against the background.
  const int right = l.left + n_src * l.cell, bottom = l.top + n_tgt * l.cell;
  for (int x = l.left - 1; x <= right; ++x) {
    img.set(x, l.top - 1, kFrame);
    img.set(x, bottom, kFrame);
  }
  for (int y = l.top - 1; y <= bottom; ++y) {
    img.set(l.left - 1, y, kFrame);
    img.set(right, y, kFrame);
  }

  const int text_h = kGlyphHeight * l.scale;
  for (int t = 0; t < n_tgt; ++t) {  // right-aligned, centred on the row
    const int len = static_cast<int>(decode_utf8(tgt_words[static_cast<size_t>(t)]).size()) * advance(l.scale);
    draw_text(img, tgt_words[static_cast<size_t>(t)], l.left - kPad - len + l.scale,
              l.top + t * l.cell + (l.cell - text_h) / 2, l.scale, false);
  }
  for (int s = 0; s < n_src; ++s)  // bottom-to-top, ending just above the matrix, centred on the column
    draw_text(img, src_words[static_cast<size_t>(s)], l.left + s * l.cell + (l.cell - text_h) / 2, l.top - kPad,
              l.scale, true);
  return img;
}

void write_attention_heatmap(const std::string& path, const Tensor& weights, const std::vector<std::string>& src_words,
                             const std::vector<std::string>& tgt_words, const HeatmapOptions& options) {
  write_png(path, render_attention_heatmap(weights, src_words, tgt_words, options));
}

}  // namespace luong
