// A training step recorded once and replayed: on a CUDA device a CUDA graph of every kernel, copy and GEMM
// the step enqueues, launched as one unit (kernels/cuda/graph.h); on the CPU the step itself, run each time
// inside a CaptureScope (core/capture_guard.h), so that a CPU run fails wherever a GPU capture would.
//
// The step function must be capture-safe:
// - it reads its batch from tensors the caller keeps and refills between runs (the graph holds their
//   addresses), with ids the caller has checked: a captured embedding cannot report a bad id;
// - it keeps every device value on the device: the loss as a tensor, the gradient clip through
//   average_and_clip_on_device_ (optim/average_and_clip.h), read after run();
// - whatever it derives on the host (lengths, masks, the token count, the learning rate, dropout's random
//   offsets) is frozen at capture: a CUDA replay repeats it. Use one CapturedStep per batch shape and
//   length pattern, a fixed learning rate, and no dropout (every replay would draw the same mask).
#pragma once
#include <functional>
#include <memory>

#include "framework/core/dtype.h"

namespace luong {

class CapturedStep {
 public:
  CapturedStep(Device device, std::function<void()> step);
  ~CapturedStep();
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;

  // Runs the step once (the first CUDA call records it, then replays it: every call runs exactly one step).
  void run();
  // Whether run() replays a CUDA graph (a CUDA device, after the first run).
  bool graphed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace luong
