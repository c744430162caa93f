// The arithmetic of the trainer's gradient average and global-norm clip, in one place for the host
// (average_and_clip_), the CPU kernel and the CUDA kernel that keep the decision on the device for a
// captured step: all three give the same bits because they run this same sequence of IEEE operations
// (a square root, multiplies, one add and one divide: nothing a compiler may contract into an FMA).
#pragma once
#include <math.h>
#include <stdint.h>

#include "framework/core/host_device.h"

namespace luong {

struct ClipDecision {
  bool finite;    // the sum of squares was finite, i.e. every gradient element was
  double norm;    // L2 norm of the token-averaged gradient (of the sum when not finite)
  double factor;  // what to multiply the gradient by: 1 / tokens, times clip / norm when clipping
};

// squares: the double sum of squares of the summed gradient; tokens 0: no averaging (its callers in
// average_and_clip.cpp refuse a negative count); clip_norm 0: none.
LUONG_HOST_DEVICE inline ClipDecision decide_clip(double squares, int64_t tokens, double clip_norm) {
  if (!isfinite(squares)) return {false, sqrt(squares), 0.0};
  const double inv_tokens = tokens > 0 ? 1.0 / static_cast<double>(tokens) : 1.0;
  const double norm = sqrt(squares) * inv_tokens;
  double factor = inv_tokens;
  if (clip_norm > 0 && norm > clip_norm) factor *= clip_norm / (norm + 1e-12);
  return {true, norm, factor};
}

}  // namespace luong
