#include "framework/optim/weight_average.h"

#include <algorithm>
#include <cmath>

#include "framework/kernels/dispatch.h"
#include "framework/ops/tensor_math.h"

namespace luong {

ExponentialMovingAverage::ExponentialMovingAverage(double decay) : decay_(decay) {
  LUONG_CHECK(std::isfinite(decay) && decay >= 0 && decay < 1, "optim.ema_decay must be in [0, 1), got ", decay);
}

double ExponentialMovingAverage::decay_at(int64_t n) const {
  const double warm_up = (1.0 + static_cast<double>(n)) / (10.0 + static_cast<double>(n));
  return std::min(decay_, warm_up);
}

void ExponentialMovingAverage::check_fits(const Tensor& params) const {
  LUONG_CHECK(
      average_.numel() == params.numel() && average_.dtype() == params.dtype() && average_.device() == params.device(),
      "the parameter average does not fit the parameters it averages");
}

void ExponentialMovingAverage::update(const Tensor& params, std::span<const FlatSpan> only) {
  const bool first = !average_.defined();
  if (first) average_ = params.clone();
  check_fits(params);
  // The weight is computed in double and rounded once, so both devices step by the same float.
  const double weight = 1.0 - decay_at(updates_);
  const auto update_range = [&](int64_t offset, int64_t numel) {
    dispatch_float(params.dtype(), "ema_update", [&](auto tag) {
      using T = decltype(tag);
      LUONG_KERNEL(params.device(), ema_update<T>, numel, average_.data<T>() + offset, params.data<T>() + offset,
                   static_cast<T>(weight));
    });
  };
  if (only.empty()) {
    update_range(0, params.numel());
  } else {
    for (const FlatSpan& s : only) {
      LUONG_CHECK(s.offset >= 0 && s.numel > 0 && s.offset + s.numel <= params.numel(), "parameter average: span [",
                  s.offset, ", ", s.offset + s.numel, ") outside the ", params.numel(), " parameters");
      update_range(s.offset, s.numel);
    }
  }
  ++updates_;
}

void ExponentialMovingAverage::swap_into(Tensor& params) {
  LUONG_CHECK(average_.defined(), "no parameter average to swap in before the first update");
  check_fits(params);
  dispatch_float(params.dtype(), "swap_values", [&](auto tag) {
    using T = decltype(tag);
    LUONG_KERNEL(params.device(), swap_values<T>, params.numel(), average_.data<T>(), params.data<T>());
  });
}

void ExponentialMovingAverage::restore(const Tensor& average, int64_t updates, const Tensor& params) {
  LUONG_CHECK(updates >= 0, "the parameter average has a negative update count ", updates);
  LUONG_CHECK(average.numel() == params.numel(), "the parameter average has ", average.numel(),
              " values but the model has ", params.numel(), " parameters");
  LUONG_CHECK(average.dtype() == DType::f32 || average.dtype() == DType::f64, "the parameter average is stored as ",
              average.dtype(), "; expected floating point");
  LUONG_CHECK(!has_non_finite(average), "the parameter average holds NaN or infinite values");
  Tensor restored = average.to(params.dtype()).to(params.device());
  // to() returns the tensor itself when nothing changes: the average must not share the caller's storage.
  if (restored.raw() == average.raw()) restored = restored.clone();
  average_ = restored;
  updates_ = updates;
}

AveragedWeights::AveragedWeights(ExponentialMovingAverage* average, Tensor& params)
    : average_(average), params_(params), active_(average != nullptr && average->started()) {
  if (active_) average_->swap_into(params_);
}

AveragedWeights::~AveragedWeights() {
  if (active_) average_->swap_into(params_);
}

}  // namespace luong
