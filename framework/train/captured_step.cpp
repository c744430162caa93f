#include "framework/train/captured_step.h"

#include "framework/core/capture_guard.h"
#include "framework/core/error.h"
#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cuda/graph.h"
#endif

namespace luong {

struct CapturedStep::Impl {
  Device device;
  std::function<void()> step;
#ifdef LUONG_WITH_CUDA
  std::unique_ptr<cuda::Graph> graph;
#endif
};

CapturedStep::CapturedStep(Device device, std::function<void()> step) : impl_(std::make_unique<Impl>()) {
  LUONG_CHECK(step != nullptr, "CapturedStep: no step function");
#ifndef LUONG_WITH_CUDA
  LUONG_CHECK(device.is_cpu(), "CapturedStep on ", device, ": this build has no CUDA backend");
#endif
  impl_->device = device;
  impl_->step = std::move(step);
}

CapturedStep::~CapturedStep() = default;

void CapturedStep::run() {
  if (impl_->device.is_cpu()) {
    CaptureScope scope;
    impl_->step();
    return;
  }
#ifdef LUONG_WITH_CUDA
  if (!impl_->graph) {
    auto graph = std::make_unique<cuda::Graph>(impl_->device.index);
    graph->capture(impl_->step);
    impl_->graph = std::move(graph);
  }
  impl_->graph->replay();
#endif
}

bool CapturedStep::graphed() const {
#ifdef LUONG_WITH_CUDA
  return impl_->graph != nullptr;
#else
  return false;
#endif
}

}  // namespace luong
