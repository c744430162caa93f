// Byte copies between devices. The CPU path is memcpy; the CUDA backend installs its own at start-up, so
// the tensor layer has exactly one place that knows devices differ.
#pragma once
#include <cstddef>

#include "framework/core/dtype.h"

namespace luong {

struct DeviceCopyFns {
  // Copy `bytes` from src on device `from` to dst on device `to` (either may be the CPU).
  void (*copy)(void* dst, Device to, const void* src, Device from, size_t bytes) = nullptr;
  void (*zero)(void* dst, Device d, size_t bytes) = nullptr;
};

void set_cuda_copy_fns(DeviceCopyFns fns);
void device_copy(void* dst, Device to, const void* src, Device from, size_t bytes);
void device_zero(void* dst, Device d, size_t bytes);

}  // namespace luong
