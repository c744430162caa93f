// An exponential moving average of the parameters (Polyak averaging as TensorFlow's ExponentialMovingAverage
// and OpenNMT-py's average_decay do it; Marian's exponential smoothing): after every optimizer step
//   average += (1 - d_n) * (param - average),   d_n = min(decay, (1 + n) / (10 + n))
// where n counts the updates before this one. The first update takes the parameters as they are (the average
// starts at the first step's parameters, not at the random initialisation), and the warm-up term keeps the
// next ones from dwelling on the early steps: the second moves 9/11 of the way, and d_n reaches `decay` after
// about 10 / (1 - decay) updates. The average lives in one flat buffer of the parameters' numel, dtype and
// device, allocated at the first update.
//
// The trainer validates and saves the average, not the parameters the optimizer steps: swap_into() exchanges
// the two buffers' values in place (no third copy of a model on the GPU) and AveragedWeights puts them back.
#pragma once
#include <cstdint>
#include <span>

#include "framework/autograd/flat_parameters.h"
#include "framework/io/state_dict.h"
#include "framework/tensor/tensor.h"

namespace luong {

class ExponentialMovingAverage {
 public:
  // decay in [0, 1): 0 makes the average the last parameters.
  explicit ExponentialMovingAverage(double decay);

  // One update from the parameters just stepped: the first call copies them all. `only`: the spans the
  // optimizer updated (train.freeze's trained parameters), empty = the whole buffer. The values outside them do
  // not change after the first call, so their average stays bit for bit equal to them and is not recomputed.
  void update(const Tensor& params, std::span<const FlatSpan> only = {});
  // The decay the n-th update (from 0) uses.
  double decay_at(int64_t n) const;
  // Exchanges the average's values with those of params (same numel, dtype, device). Twice restores both.
  void swap_into(Tensor& params);

  bool started() const { return average_.defined(); }
  int64_t updates() const { return updates_; }
  double decay() const { return decay_; }
  const Tensor& average() const { return average_; }

  // Restores an average whose values are those of `average` after `updates` updates (copied, to the dtype and
  // device of params, whose numel it must have).
  void restore(const Tensor& average, int64_t updates, const Tensor& params);
  // Starts over: no average until the next update.
  void reset() { average_ = Tensor(), updates_ = 0; }

 private:
  void check_fits(const Tensor& params) const;  // same numel, dtype and device as the average

  double decay_;
  int64_t updates_ = 0;
  Tensor average_;  // (numel,), undefined before the first update
};

// Swaps an average into the parameters' buffer for its lifetime (validation, a checkpoint's write), and back
// out when it ends, also when what it covers throws. Does nothing when the average has not started.
class AveragedWeights {
 public:
  AveragedWeights(ExponentialMovingAverage* average, Tensor& params);
  ~AveragedWeights();
  AveragedWeights(const AveragedWeights&) = delete;
  AveragedWeights& operator=(const AveragedWeights&) = delete;
  bool active() const { return active_; }

 private:
  ExponentialMovingAverage* average_;
  Tensor& params_;
  bool active_;
};

}  // namespace luong
