// Attention heatmap PNGs: size, colours of known cells, labels present, clear errors.
#include "framework/io/heatmap.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "framework/io/heatmap_font.h"
#include "tests/support/temp_dir.h"

namespace luong {
namespace {

using testing::TempDir;

const std::vector<std::string> kSrc = {"Das", "Haus", "ist", "groß"};
const std::vector<std::string> kTgt = {"the", "house", "is"};

Tensor example_weights() {
  return Tensor::from({0.0, 0.2, 0.3, 0.5,  //
                       0.1, 0.2, 1.0, 0.0,  //
                       0.0, 0.0, 0.4, 0.6},
                      {3, 4});
}

std::vector<uint8_t> pixel(const RgbImage& img, int x, int y) { return {img.at(x, y), img.at(x, y) + 3}; }

std::vector<uint8_t> cell_centre(const RgbImage& img, const HeatmapLayout& l, int t, int s) {
  return pixel(img, l.left + s * l.cell + l.cell / 2, l.top + t * l.cell + l.cell / 2);
}

int ink_pixels(const RgbImage& img, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) n += pixel(img, x, y) == std::vector<uint8_t>({0, 0, 0});
  return n;
}

TEST(Heatmap, WritesAPngOfTheExpectedSizeAndColours) {
  TempDir dir;
  const std::string path = dir.file("attn.png");
  write_attention_heatmap(path, example_weights(), kSrc, kTgt);
  const RgbImage img = read_png(path);
  // cell 16 -> label scale 2 -> 12 px per character; "house" is the longest target word (5 characters),
  // "Haus" and "groß" the longest source words (4 code points each; ß is drawn as one box).
  EXPECT_EQ(img.width, (4 + 5 * 12 + 4) + 4 * 16 + 4);
  EXPECT_EQ(img.height, (4 + 4 * 12 + 4) + 3 * 16 + 4);
  const HeatmapLayout l = heatmap_layout(kSrc, kTgt);
  EXPECT_EQ(l.width, img.width);
  EXPECT_EQ(l.height, img.height);

  const std::vector<uint8_t> dark(kHeatmapDark, kHeatmapDark + 3), white = {255, 255, 255};
  EXPECT_EQ(cell_centre(img, l, 1, 2), dark);  // weight 1
  EXPECT_EQ(cell_centre(img, l, 0, 0), white);  // weight 0
  const auto half = cell_centre(img, l, 0, 3);  // weight 0.5: halfway between
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(half[c], (255 + kHeatmapDark[c]) / 2.0, 1.0);
  for (int t = 0; t < 3; ++t)
    for (int s = 0; s < 4; ++s) {
      const auto p = cell_centre(img, l, t, s);
      EXPECT_GE(p[0] + p[1] + p[2], kHeatmapDark[0] + kHeatmapDark[1] + kHeatmapDark[2]) << t << "," << s;
    }
  // Labels: ink left of every row and above every column, none inside the matrix.
  for (int t = 0; t < 3; ++t) EXPECT_GT(ink_pixels(img, 0, l.top + t * l.cell, l.left, l.top + (t + 1) * l.cell), 10);
  for (int s = 0; s < 4; ++s) EXPECT_GT(ink_pixels(img, l.left + s * l.cell, 0, l.left + (s + 1) * l.cell, l.top), 10);
  EXPECT_EQ(ink_pixels(img, l.left, l.top, l.left + 4 * l.cell, l.top + 3 * l.cell), 0);
}

TEST(Heatmap, CellSizeIsConfigurable) {
  const RgbImage img = render_attention_heatmap(example_weights(), kSrc, kTgt, {.cell_size = 8});
  EXPECT_EQ(img.width, (4 + 5 * 6 + 4) + 4 * 8 + 4);  // scale 1: 6 px per character
  EXPECT_EQ(img.height, (4 + 4 * 6 + 4) + 3 * 8 + 4);
}

TEST(Heatmap, MismatchedWordsAndBadValuesAreErrors) {
  try {
    render_attention_heatmap(example_weights(), kSrc, {"the", "house"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weights (3, 4) do not match 2 target words x 4 source words"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(render_attention_heatmap(Tensor::zeros({12}), kSrc, kTgt), Error);
  Tensor nan = example_weights();
  nan.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(render_attention_heatmap(nan, kSrc, kTgt), Error);
  TempDir dir;
  try {
    write_attention_heatmap(dir.file("missing/dir/a.png"), example_weights(), kSrc, kTgt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("missing/dir/a.png")), std::string::npos) << e.what();
  }
}

TEST(HeatmapFont, AsciiGlyphsAndUnknownBox) {
  EXPECT_EQ(glyph('I'), (std::array<uint8_t, 7>{0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}));
  EXPECT_EQ(glyph(0xDF), glyph(0x65E5));  // ß and 日 share the '?' box
  EXPECT_NE(glyph(0xDF), glyph('?'));
  for (uint32_t c = '!'; c <= '~'; ++c) {
    int ink = 0;
    for (auto row : glyph(c)) ink += row != 0;
    EXPECT_GT(ink, 0) << "glyph " << static_cast<char>(c) << " is blank";
  }
  EXPECT_EQ(decode_utf8("aß日"), (std::vector<uint32_t>{'a', 0xDF, 0x65E5}));
  EXPECT_EQ(decode_utf8("a\xFF"), (std::vector<uint32_t>{'a', 0xFFFD}));
}

}  // namespace
}  // namespace luong
