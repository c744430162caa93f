// Kernel-level CUDA tests hold each buffer twice: a CPU tensor for luong::cpu::fn and its copy on cuda:0
// for luong::cuda::fn, filled with the same values, so the two kernels' results can be compared directly.
#pragma once
#include "tests/cuda/cuda_test_util.h"

namespace luong::testing {

struct KernelPair {
  Tensor cpu, gpu;

  template <class T>
  T* c() const {
    return cpu.data<T>();
  }
  template <class T>
  T* g() const {
    return gpu.data<T>();
  }
  // max mixed error of the CUDA result against the CPU result
  double error() const { return max_mixed_error(gpu, cpu); }
  bool identical() const { return bitwise_equal(gpu, cpu); }
};

inline KernelPair make_pair(const Tensor& host) { return {host.clone(), host.to(Device::cuda(0))}; }
inline KernelPair random_pair(const Shape& shape, DType dtype, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  return make_pair(random_tensor(shape, dtype, Device::cpu(), seed, lo, hi));
}

}  // namespace luong::testing
