// The single point where a kernel call is routed to the CPU or CUDA implementation. Both backends expose
// the same function names and signatures (luong::cpu::fn and luong::cuda::fn), so an op writes
//   LUONG_KERNEL(x.device(), unary_forward<T>, kind, n, px, py);
// once, and a CPU-only build still compiles it.
#pragma once
#include "framework/core/error.h"
#include "framework/kernels/cpu/attention_step.h"
#include "framework/kernels/cpu/cross_entropy_inplace.h"
#include "framework/kernels/cpu/elementwise.h"
#include "framework/kernels/cpu/gather.h"
#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cpu/lstm_cell.h"
#include "framework/kernels/cpu/optim_kernels.h"
#include "framework/kernels/cpu/reduce.h"
#include "framework/kernels/cpu/softmax.h"
#include "framework/kernels/kernel_profile.h"

// A CPU call runs inside a KernelProfileScope temporary (kernel_profile.h: LUONG_PROFILE=1 times it by name).
#define LUONG_CPU_KERNEL_CALL(fn, ...) (::luong::KernelProfileScope(#fn), ::luong::cpu::fn(__VA_ARGS__))
#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cuda/kernels.h"
#define LUONG_KERNEL(device, fn, ...) \
  ((device).is_cuda() ? ::luong::cuda::fn(__VA_ARGS__) : LUONG_CPU_KERNEL_CALL(fn, __VA_ARGS__))
#else
#define LUONG_KERNEL(device, fn, ...)                                                       \
  ((device).is_cuda() ? (::luong::detail::no_cuda_backend(), ::luong::cpu::fn(__VA_ARGS__)) \
                      : LUONG_CPU_KERNEL_CALL(fn, __VA_ARGS__))
#endif

namespace luong::detail {
[[noreturn]] inline void no_cuda_backend() {
  LUONG_FAIL("this build has no CUDA backend (configure with -DLUONG_CUDA=ON)");
}
}  // namespace luong::detail
