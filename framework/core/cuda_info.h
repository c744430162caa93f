// Whether CUDA devices can be used, callable from any build: a CPU-only build answers 0 (cuda_info.cpp),
// a CUDA build asks the runtime (kernels/cuda/device.cpp). Never throws: no driver or no device is 0.
#pragma once

namespace luong {

int cuda_device_count();
inline bool cuda_available() { return cuda_device_count() > 0; }

}  // namespace luong
