#include "framework/core/cuda_info.h"

// The CUDA build defines cuda_device_count() in framework/kernels/cuda/device.cpp.
#ifndef LUONG_WITH_CUDA
namespace luong {

int cuda_device_count() { return 0; }

}  // namespace luong
#endif
