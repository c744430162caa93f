#ifdef LUONG_WITH_CUDA
// Devices, per-device contexts (stream, cuBLAS handle, scratch), the caching allocators and the device
// copies, and their registration with the tensor layer at static-initialisation time.
#include <array>
#include <atomic>

#include "framework/core/capture_guard.h"
#include "framework/core/cuda_info.h"
#include "framework/core/error.h"
#include "framework/core/precision.h"
#include "framework/kernels/cuda/graph.h"
#include "framework/kernels/cuda/runtime.h"
#include "framework/memory/cuda_allocator.h"
#include "framework/tensor/device_copy.h"

namespace luong::cuda {
namespace {

constexpr int kMaxDevices = 64;
// 32 MiB: the cuBLAS guide's recommended workspace for Hopper.
constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;

std::atomic<bool> g_deterministic{true};
std::mutex g_mutex;
// Created on first use and never destroyed: tensors freed during static destruction still reach their
// allocator, and the CUDA runtime may already be gone by then.
// Contexts are read on every kernel launch: an atomic load there, the mutex only to create one.
std::array<std::atomic<DeviceContext*>, kMaxDevices> g_contexts{};
std::array<CachingAllocator*, kMaxDevices> g_allocators{};

void check_device(int index) {
  const int n = device_count();
  LUONG_CHECK(index >= 0 && index < n && index < kMaxDevices, "device cuda:", index, " requested but ", n,
              " CUDA device(s) are visible", n == 0 ? " (no driver or no GPU on this machine)" : "");
}

DeviceContext* create_context(int device) {
  DeviceGuard guard(device);
  auto* ctx = new DeviceContext;
  ctx->device = device;
  LUONG_CUDA_CHECK(cudaStreamCreate(&ctx->stream));
  LUONG_CUBLAS_CHECK(cublasCreate(&ctx->blas));
  LUONG_CUBLAS_CHECK(cublasSetStream(ctx->blas, ctx->stream));
  LUONG_CUDA_CHECK(cudaMalloc(&ctx->blas_workspace, kBlasWorkspaceBytes));
  LUONG_CUBLAS_CHECK(cublasSetWorkspace(ctx->blas, ctx->blas_workspace, kBlasWorkspaceBytes));
  ctx->blas_workspace_bytes = kBlasWorkspaceBytes;
  // Default math: no TF32 behind the caller's back. Reduced precision is chosen per call by cuda::gemm
  // from gemm_precision() (framework/core/precision.h) through the compute type.
  LUONG_CUBLAS_CHECK(cublasSetMathMode(ctx->blas, CUBLAS_DEFAULT_MATH));
  LUONG_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ctx->partials), sizeof(double) * (kMaxReduceBlocks + 1)));
  ctx->result = ctx->partials + kMaxReduceBlocks;
  LUONG_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ctx->host_result), sizeof(double)));
  return ctx;
}

CachingAllocator* create_allocator(int device) {
  CachingAllocator::Backend backend;
  backend.alloc = [device](size_t bytes) -> void* {
    DeviceGuard guard(device);
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it: the allocator drops its cache and retries
      return nullptr;
    }
    LUONG_CUDA_CHECK(e);
    return p;
  };
  backend.free = [device](void* p) {
    DeviceGuard guard(device);
    LUONG_CUDA_CHECK(cudaFree(p));
  };
  backend.sync = [device] {
    DeviceGuard guard(device);
    LUONG_CUDA_CHECK(cudaDeviceSynchronize());
  };
  return new CachingAllocator(Device::cuda(device).name(), std::move(backend));
}

// Device copies run on the stream of the CUDA side, so they are ordered after the kernels that produced or
// will consume the bytes; a copy that touches host memory waits, so the host may read or free it at once.
void copy_bytes(void* dst, Device to, const void* src, Device from, size_t bytes) {
  if (to.is_cuda() && from.is_cuda() && to.index != from.index) {
    // Peer copy: the source's producers run on the source device's stream.
    LUONG_CUDA_CHECK(cudaStreamSynchronize(context(from.index).stream));
  }
  const int device = to.is_cuda() ? to.index : from.index;
  DeviceContext& ctx = context(device);
  DeviceGuard guard(device);
  const cudaMemcpyKind kind = to.is_cpu()     ? cudaMemcpyDeviceToHost
                              : from.is_cpu() ? cudaMemcpyHostToDevice
                                              : cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyHostToDevice) {
    // Under a graph capture: the graph's own pinned copy, read at each replay; no wait (nothing runs).
    if (const void* pinned = capture_host_copy(src, bytes)) {
      LUONG_CUDA_CHECK(cudaMemcpyAsync(dst, pinned, bytes, kind, ctx.stream));
      return;
    }
  }
  LUONG_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream));
  if (kind != cudaMemcpyDeviceToDevice) LUONG_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
}

void zero_bytes(void* dst, Device d, size_t bytes) {
  DeviceContext& ctx = context(d.index);
  DeviceGuard guard(d.index);
  LUONG_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, ctx.stream));
}

Allocator& allocator_factory(int index) { return device_allocator(index); }

const bool kRegistered = [] {
  set_cuda_allocator_factory(&allocator_factory);
  set_cuda_copy_fns(DeviceCopyFns{&copy_bytes, &zero_bytes});
  return true;
}();

}  // namespace

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver / no device: not an error for a build that may run on CPUs
      return 0;
    }
    return n;
  }();
  return count;
}

void set_device(int index) {
  check_device(index);
  LUONG_CUDA_CHECK(cudaSetDevice(index));
}

int current_device() {
  LUONG_CHECK(device_count() > 0, "no CUDA device is visible (no driver or no GPU on this machine)");
  int d = 0;
  LUONG_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void synchronize() { LUONG_CUDA_CHECK(cudaStreamSynchronize(stream())); }

void set_tf32(bool on) { set_gemm_precision(on ? GemmPrecision::tf32 : GemmPrecision::fp32); }
bool tf32() { return gemm_precision() == GemmPrecision::tf32; }

void set_deterministic(bool on) { g_deterministic.store(on); }
bool deterministic() { return g_deterministic.load(); }

Allocator& device_allocator(int index) {
  check_device(index);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& slot = g_allocators[static_cast<size_t>(index)];
  if (!slot) slot = create_allocator(index);
  return *slot;
}

void empty_cache(int index) { static_cast<CachingAllocator&>(device_allocator(index)).empty_cache(); }

DeviceContext& context(int device) {
  check_device(device);
  auto& slot = g_contexts[static_cast<size_t>(device)];
  if (DeviceContext* ctx = slot.load(std::memory_order_acquire)) return *ctx;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!slot.load()) slot.store(create_context(device), std::memory_order_release);
  return *slot.load();
}

DeviceContext& context() { return context(current_device()); }

void read_result(DeviceContext& ctx, size_t bytes) {
  check_no_host_read("a device reduction's result");
  LUONG_CUDA_CHECK(cudaMemcpyAsync(ctx.host_result, ctx.result, bytes, cudaMemcpyDeviceToHost, ctx.stream));
  LUONG_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
}

DeviceBuffer::DeviceBuffer(size_t bytes)
    : device_(current_device()), bytes_(bytes), ptr_(device_allocator(device_).allocate(bytes)) {}

DeviceBuffer::~DeviceBuffer() { device_allocator(device_).deallocate(ptr_, bytes_); }

}  // namespace luong::cuda

namespace luong {

int cuda_device_count() { return cuda::device_count(); }

}  // namespace luong
#endif  // LUONG_WITH_CUDA
