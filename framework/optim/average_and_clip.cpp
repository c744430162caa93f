#include "framework/optim/average_and_clip.h"

#include <cmath>

#include "framework/core/error.h"
#include "framework/kernels/dispatch.h"
#include "framework/ops/tensor_math.h"
#include "framework/optim/clip_decision.h"

namespace luong {
namespace {

// The arguments both entry points take. A negative count is never a real one: it is what a loss computed
// inside a captured step returns for device targets (ops/loss_targets.h), and taken as "no averaging" it
// would silently train with a summed gradient.
void check_arguments(const char* fn, int64_t tokens, double clip_norm) {
  LUONG_CHECK(std::isfinite(clip_norm) && clip_norm >= 0, fn, ": clip_norm must be >= 0 (0 = no clipping), got ",
              clip_norm);
  LUONG_CHECK(tokens >= 0, fn, ": tokens must be >= 0 (0 = no averaging), got ", tokens,
              "; a loss computed inside a captured step does not count its targets: pass the count the batch was "
              "staged with");
}

// The decision the host entry points take from the gradient's sum of squares (one read of the buffer, or of
// the spans trained); fn names the caller in errors.
AveragedGradient decide(const char* fn, double squares, int64_t tokens, double clip_norm) {
  check_arguments(fn, tokens, clip_norm);
  const ClipDecision d = decide_clip(squares, tokens, clip_norm);
  return {d.finite, d.norm, d.factor};
}

}  // namespace

AveragedGradient measure_average_and_clip(const Tensor& flat_grad, int64_t tokens, double clip_norm) {
  return decide("measure_average_and_clip", sum_squares(flat_grad), tokens, clip_norm);
}

AveragedGradient measure_average_and_clip(FlatParameters& params, int64_t tokens, double clip_norm,
                                          std::span<const FlatSpan> only) {
  if (only.empty()) return measure_average_and_clip(params.grad(), tokens, clip_norm);
  double squares = 0.0;
  for (const FlatSpan& s : only) squares += sum_squares(params.grad_span(s));
  return decide("measure_average_and_clip", squares, tokens, clip_norm);
}

AveragedGradient average_and_clip_(Tensor& flat_grad, int64_t tokens, double clip_norm) {
  AveragedGradient g = decide("average_and_clip_", sum_squares(flat_grad), tokens, clip_norm);
  if (!g.finite) return g;
  if (g.factor != 1.0) scale_(flat_grad, g.factor);
  g.factor = 1.0;
  return g;
}

void average_and_clip_on_device_(Tensor& flat_grad, int64_t tokens, double clip_norm, Tensor& stats) {
  check_arguments("average_and_clip_on_device_", tokens, clip_norm);
  LUONG_CHECK(
      stats.defined() && stats.dtype() == DType::f64 && stats.numel() == 3 && stats.device() == flat_grad.device(),
      "average_and_clip_on_device_: stats must be 3 float64 values on ", flat_grad.device(), ", got ",
      stats.describe());
  const Device dev = flat_grad.device();
  double* s = stats.data<double>();
  dispatch_float(flat_grad.dtype(), "average_and_clip_on_device_", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(dev, sum_squares_to<T>, flat_grad.numel(), flat_grad.data<T>(), s);
    LUONG_KERNEL(dev, clip_decide, s, tokens, clip_norm);
    LUONG_KERNEL(dev, scale_or_zero<T>, flat_grad.numel(), s, flat_grad.data<T>());
  });
}

AveragedGradient read_averaged_gradient(const Tensor& stats) {
  const std::vector<double> v = stats.to_vector();
  LUONG_CHECK(v.size() == 3, "read_averaged_gradient: expected the 3 values of average_and_clip_on_device_");
  return {v[1] != 0.0, v[0]};
}

double clip_grad_norm_(Tensor& flat_grad, double max_norm) {
  LUONG_CHECK(max_norm > 0, "clip_grad_norm_: max_norm must be positive, got ", max_norm);
  return average_and_clip_(flat_grad, 0, max_norm).norm;
}

}  // namespace luong
