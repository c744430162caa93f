// The gradient half of the trainer's update, one definition shared by `luong train`, `luong dump-step` and
// the step benchmark: the summed gradient becomes the token average, clipped to a global L2 norm
// (Pascanu et al. 2013).
#pragma once
#include <cstdint>
#include <span>

#include "framework/autograd/flat_parameters.h"
#include "framework/tensor/tensor.h"

namespace luong {

struct AveragedGradient {
  bool finite = true;  // false: some element is NaN or Inf; the buffer is left untouched
  double norm = 0.0;   // L2 norm of the token-averaged gradient, before clipping (NaN or Inf if not finite)
  // measure_average_and_clip: what the gradient is to be multiplied by (1 / tokens, times clip / norm when
  // clipping). average_and_clip_ has applied it already and reports 1. Not finite: 0.
  double factor = 1.0;
};

// flat_grad holds a gradient summed over `tokens` target tokens (tokens <= 0: already an average).
// Scales it in place by 1 / tokens and, when clip_norm > 0 and the averaged norm exceeds it, by
// clip_norm / norm as well: one multiply per element. The finiteness check and the norm come from the same
// single pass (a float's square cannot overflow a double, so the double sum of squares is finite exactly when
// every element is), so the whole function reads the buffer twice instead of the four or five passes of a
// separate NaN check, average, norm and clip.
AveragedGradient average_and_clip_(Tensor& flat_grad, int64_t tokens, double clip_norm);

// The same decision from one read of the buffer, which is left as it is: the caller applies `factor` in the
// optimizer's update (Optimizer::step's grad_scale), so the gradient is read twice in a step (the norm, the
// update) instead of three times with a write (the norm, the scaling, the update). The trainer's path; its
// update has the bits of average_and_clip_ followed by a step with grad_scale 1.
AveragedGradient measure_average_and_clip(const Tensor& flat_grad, int64_t tokens, double clip_norm);
// The trainer's entry point: the same over the spans `only` of the parameters' gradient (empty: all of it),
// for an update of those spans (Optimizer::step's `only`). Frozen parameters' slots (FrozenParameters::
// trained_spans) are then neither read nor zeroed: they hold no gradient, and would add nothing but a pass.
AveragedGradient measure_average_and_clip(FlatParameters& params, int64_t tokens, double clip_norm,
                                          std::span<const FlatSpan> only = {});

// The same average and clip with nothing read back to the host, for a step captured in a CUDA graph (or any
// step that should not wait for the device): the sum of squares, the decision and the scaling all stay on
// flat_grad's device, in stats (3 float64 values on that device: norm, finite flag, factor). Where
// average_and_clip_ would leave a non-finite buffer untouched for the caller to skip the update, this one
// writes zeros, so that a plain SGD step that follows leaves the parameters as they were (an optimizer with
// state, such as Adam or momentum, would still advance it). Same bits as average_and_clip_ otherwise.
void average_and_clip_on_device_(Tensor& flat_grad, int64_t tokens, double clip_norm, Tensor& stats);
// The outcome, read from stats after the step (a host read: a sync on a GPU).
AveragedGradient read_averaged_gradient(const Tensor& stats);

// Clipping alone, for a gradient that is already an average: scales by max_norm / norm when norm > max_norm
// (max_norm > 0) and returns the norm before clipping (NaN or Inf, with the buffer untouched, when an element
// is not finite).
double clip_grad_norm_(Tensor& flat_grad, double max_norm);

}  // namespace luong
