// gtable[ids[i], :] += gout[i, :] (ids == padding_idx skipped); semantics are kernels/cpu/gather.h's.
//
// Deterministic mode (default): a stable radix sort of (id, position) groups the positions of each id in
// increasing order; the block at the head of each group then adds the group's rows into the table row
// one after another, which is exactly the CPU's summation order, so the result is the CPU's bit for bit.
// Fast mode (set_deterministic(false)): one atomicAdd per element, summation order left to the hardware.
#include <cub/device/device_radix_sort.cuh>

#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

__global__ void iota_kernel(int64_t n, int* out) {
  for (int64_t i = global_index(); i < n; i += global_stride()) out[i] = static_cast<int>(i);
}

// One block per run of equal sorted ids (blocks at other positions return at once).
template <class T>
__global__ void add_runs_kernel(int64_t n, int64_t dim, const int64_t* sorted_ids, const int* positions,
                                int64_t padding_idx, const T* gout, T* gtable) {
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {
    const int64_t id = sorted_ids[k];
    if ((k > 0 && sorted_ids[k - 1] == id) || id == padding_idx) continue;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      T acc = gtable[id * dim + j];
      for (int64_t q = k; q < n && sorted_ids[q] == id; ++q) acc += gout[static_cast<int64_t>(positions[q]) * dim + j];
      gtable[id * dim + j] = acc;
    }
  }
}

__device__ inline void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double* p, double v) { atomicAdd(p, v); }
// Two's-complement addition is the same on unsigned bits.
__device__ inline void atomic_add(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <class T>
__global__ void scatter_add_kernel(int64_t n, int64_t dim, const int64_t* ids, int64_t padding_idx, const T* gout,
                                   T* gtable) {
  const int64_t total = n * dim;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    const int64_t id = ids[idx / dim];
    if (id != padding_idx) atomic_add(&gtable[id * dim + idx % dim], gout[idx]);
  }
}

template <class T>
void deterministic_backward(int64_t n, int64_t dim, const int64_t* ids, int64_t padding_idx, const T* gout,
                            T* gtable) {
  LUONG_CHECK(n < (int64_t{1} << 31), "embedding_backward: ", n, " ids exceed the sort's 32-bit positions");
  cudaStream_t s = stream();
  const int count = static_cast<int>(n);
  DeviceBuffer positions_in(sizeof(int) * n), positions(sizeof(int) * n), sorted_ids(sizeof(int64_t) * n);
  iota_kernel<<<grid_for(n), kThreads, 0, s>>>(n, positions_in.as<int>());
  LUONG_CUDA_CHECK_LAUNCH("iota_kernel");
  size_t temp_bytes = 0;
  LUONG_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, ids, sorted_ids.as<int64_t>(),
                                                   positions_in.as<int>(), positions.as<int>(), count, 0, 64, s));
  DeviceBuffer temp(temp_bytes > 0 ? temp_bytes : 1);
  LUONG_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.as<void>(), temp_bytes, ids, sorted_ids.as<int64_t>(),
                                                   positions_in.as<int>(), positions.as<int>(), count, 0, 64, s));
  const unsigned grid = static_cast<unsigned>(n < 65535 ? n : 65535);
  const int threads = row_threads(dim) < 256 ? row_threads(dim) : 256;
  add_runs_kernel<<<grid, threads, 0, s>>>(n, dim, sorted_ids.as<int64_t>(), positions.as<int>(), padding_idx, gout,
                                           gtable);
  LUONG_CUDA_CHECK_LAUNCH("add_runs_kernel");
}

}  // namespace

template <class T>
void embedding_backward(int64_t n, int64_t dim, const int64_t* ids, int64_t padding_idx, const T* gout, T* gtable) {
  if (n == 0 || dim == 0) return;
  if (deterministic()) {
    deterministic_backward(n, dim, ids, padding_idx, gout, gtable);
    return;
  }
  scatter_add_kernel<<<grid_for(n * dim), kThreads, 0, stream()>>>(n, dim, ids, padding_idx, gout, gtable);
  LUONG_CUDA_CHECK_LAUNCH("scatter_add_kernel");
}

template void embedding_backward<float>(int64_t, int64_t, const int64_t*, int64_t, const float*, float*);
template void embedding_backward<double>(int64_t, int64_t, const int64_t*, int64_t, const double*, double*);
template void embedding_backward<int64_t>(int64_t, int64_t, const int64_t*, int64_t, const int64_t*, int64_t*);

}  // namespace luong::cuda
