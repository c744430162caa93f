// Attention heatmaps as PNG images: one cell per (target word, source word), white for weight 0 to dark
// blue for weight 1, source words written bottom-to-top above the columns, target words left of the rows.
#pragma once
#include <string>
#include <vector>

#include "framework/io/png_image.h"
#include "framework/tensor/tensor.h"

namespace luong {

struct HeatmapOptions {
  int cell_size = 16;  // pixels per cell side; labels are drawn at scale max(1, cell_size / 8)
};

// The colour of a weight in [0, 1] (clamped): white (255, 255, 255) at 0 to kHeatmapDark at 1.
inline constexpr uint8_t kHeatmapDark[3] = {8, 48, 107};
void heatmap_colour(double weight, uint8_t out[3]);

// weights: (tgt_len, src_len), any float dtype and device, finite values in [0, 1] (clamped).
// The errors name the shape and both word counts when they disagree.
RgbImage render_attention_heatmap(const Tensor& weights, const std::vector<std::string>& src_words,
                                  const std::vector<std::string>& tgt_words, const HeatmapOptions& options = {});
void write_attention_heatmap(const std::string& path, const Tensor& weights,  // (tgt_len, src_len)
                             const std::vector<std::string>& src_words, const std::vector<std::string>& tgt_words,
                             const HeatmapOptions& options = {});

// Where render_attention_heatmap puts things, so tests and callers can find cell (t, s).
struct HeatmapLayout {
  int scale = 1;    // label pixel size
  int left = 0;     // x of the first column
  int top = 0;      // y of the first row
  int cell = 16;
  int width = 0;
  int height = 0;
};
HeatmapLayout heatmap_layout(const std::vector<std::string>& src_words, const std::vector<std::string>& tgt_words,
                             const HeatmapOptions& options = {});

}  // namespace luong
