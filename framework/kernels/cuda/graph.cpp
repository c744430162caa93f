#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cuda/graph.h"

#include <cstring>
#include <vector>

#include "framework/core/capture_guard.h"
#include "framework/core/error.h"
#include "framework/kernels/cuda/runtime.h"
#include "framework/memory/cuda_allocator.h"

namespace luong::cuda {

struct Graph::Impl {
  int device = 0;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  int pool = 0;               // the allocator's private pool for this graph (0: none yet)
  std::vector<void*> pinned;  // host data the graph uploads at each replay
};

namespace {

// The pinned buffers of the graph the calling thread is capturing into (null: not capturing).
thread_local std::vector<void*>* t_capturing = nullptr;

CachingAllocator& caching_allocator(int device) { return static_cast<CachingAllocator&>(device_allocator(device)); }

}  // namespace

Graph::Graph(int device) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  context(device);  // the stream and cuBLAS handle exist before any capture
}

Graph::~Graph() {
  if (impl_->exec || !impl_->pinned.empty()) cudaStreamSynchronize(context(impl_->device).stream);
  if (impl_->exec) cudaGraphExecDestroy(impl_->exec);
  if (impl_->graph) cudaGraphDestroy(impl_->graph);
  for (void* p : impl_->pinned) cudaFreeHost(p);
  if (impl_->pool != 0) caching_allocator(impl_->device).release_private_pool(impl_->pool);
}

bool Graph::captured() const { return impl_->exec != nullptr; }

void Graph::capture(const std::function<void()>& fn) {
  LUONG_CHECK(!impl_->exec, "cuda::Graph: already captured (a graph records its work once)");
  LUONG_CHECK(t_capturing == nullptr, "cuda::Graph: a capture is already in progress on this thread");
  // The step's launchers enqueue on the current device's stream: make it the graph's, or its work would go to a
  // stream nobody is capturing.
  DeviceGuard on_device(impl_->device);
  DeviceContext& ctx = context(impl_->device);
  // Queued work is not part of the graph: let it finish, so that the capture starts from a quiet stream.
  LUONG_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  CachingAllocator& alloc = caching_allocator(impl_->device);
  // Relaxed: the caching allocator may call cudaMalloc for a block the capture needs (ordinary memory the
  // graph then addresses), which the stricter modes reject as "potentially unsafe".
  impl_->pool = alloc.begin_private_pool(impl_->pool);
  const cudaError_t begun = cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeRelaxed);
  if (begun != cudaSuccess) alloc.end_private_pool();
  LUONG_CUDA_CHECK(begun);
  t_capturing = &impl_->pinned;
  auto finish = [&](cudaGraph_t* g) {
    const cudaError_t e = cudaStreamEndCapture(ctx.stream, g);
    t_capturing = nullptr;
    alloc.end_private_pool();
    return e;
  };
  try {
    CaptureScope scope;
    fn();
  } catch (...) {
    cudaGraph_t g = nullptr;
    finish(&g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();  // the invalidated capture's error, if any: the exception in flight says more
    throw;
  }
  cudaGraph_t g = nullptr;
  const cudaError_t e = finish(&g);
  LUONG_CHECK(e == cudaSuccess && g != nullptr, "capturing a step into a CUDA graph failed: ", cudaGetErrorName(e),
              " (", cudaGetErrorString(e),
              "); something in the step synchronised with the device or used another stream");
  const cudaError_t made = cudaGraphInstantiate(&impl_->exec, g, 0);
  if (made != cudaSuccess) {
    cudaGraphDestroy(g);
    impl_->exec = nullptr;
  }
  LUONG_CUDA_CHECK(made);
  impl_->graph = g;
}

void Graph::replay() {
  LUONG_CHECK(impl_->exec, "cuda::Graph: replay before capture");
  DeviceGuard on_device(impl_->device);
  LUONG_CUDA_CHECK(cudaGraphLaunch(impl_->exec, context(impl_->device).stream));
}

const void* capture_host_copy(const void* src, size_t bytes) {
  std::vector<void*>* pinned = t_capturing;
  if (!pinned) return nullptr;
  void* p = nullptr;
  LUONG_CUDA_CHECK(cudaMallocHost(&p, bytes));
  std::memcpy(p, src, bytes);
  pinned->push_back(p);
  return p;
}

}  // namespace luong::cuda
#endif  // LUONG_WITH_CUDA
