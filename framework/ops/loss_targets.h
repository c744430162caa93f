// Checks shared by the loss ops (ops/cross_entropy.cpp, ops/linear_cross_entropy.cpp).
#pragma once
#include "framework/core/capture_guard.h"
#include "framework/core/error.h"
#include "framework/tensor/tensor.h"

namespace luong {

// Validates `targets` (int64, `rows` ids) and the smoothing on the host once (cheap: N ints), so a bad id
// names its op, value and row instead of reading out of bounds in a kernel. Returns the number of targets
// that are not ignore_index: the token count the losses return (-1 for device targets inside a CaptureScope,
// see below).
inline int64_t check_loss_targets(const char* op, const Tensor& targets, int64_t rows, int64_t vocab,
                                  int64_t ignore_index, double label_smoothing) {
  LUONG_CHECK(targets.dtype() == DType::i64 && targets.numel() == rows, op, ": targets must be int64 with ", rows,
              " elements, got ", targets.describe());
  LUONG_CHECK(label_smoothing >= 0.0 && label_smoothing < 1.0, op, ": label_smoothing must be in [0, 1), got ",
              label_smoothing);
  // Inside a captured step (core/capture_guard.h) device targets cannot be read: whoever stages them checks
  // them, and knows the token count (-1 here). Host targets are still checked: a CPU step run under the guard
  // must not read out of bounds either.
  if (capturing() && !targets.device().is_cpu()) return -1;
  const Tensor host = targets.to(Device::cpu());
  const int64_t* tp = host.data<int64_t>();
  int64_t tokens = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (tp[r] == ignore_index) continue;
    LUONG_CHECK(tp[r] >= 0 && tp[r] < vocab, op, ": target ", tp[r], " at row ", r, " is outside the vocabulary [0, ",
                vocab, ")");
    ++tokens;
  }
  return tokens;
}

}  // namespace luong
