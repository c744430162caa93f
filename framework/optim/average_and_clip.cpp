#include "framework/optim/average_and_clip.h"

#include <cmath>

#include "framework/core/error.h"
#include "framework/ops/tensor_math.h"

namespace luong {

AveragedGradient average_and_clip_(Tensor& flat_grad, int64_t tokens, double clip_norm) {
  LUONG_CHECK(std::isfinite(clip_norm) && clip_norm >= 0, "clip_norm must be >= 0 (0 = no clipping), got ",
              clip_norm);
  const double squares = sum_squares(flat_grad);
  if (!std::isfinite(squares)) return {false, std::sqrt(squares)};
  const double inv_tokens = tokens > 0 ? 1.0 / static_cast<double>(tokens) : 1.0;
  const double norm = std::sqrt(squares) * inv_tokens;
  double factor = inv_tokens;
  if (clip_norm > 0 && norm > clip_norm) factor *= clip_norm / (norm + 1e-12);
  if (factor != 1.0) scale_(flat_grad, factor);
  return {true, norm};
}

double clip_grad_norm_(Tensor& flat_grad, double max_norm) {
  LUONG_CHECK(max_norm > 0, "clip_grad_norm_: max_norm must be positive, got ", max_norm);
  return average_and_clip_(flat_grad, 0, max_norm).norm;
}

}  // namespace luong
