// LUONG_HOST_DEVICE marks a function that runs the same arithmetic on the host and in CUDA kernels (the
// Philox generator, the gradient clip's decision), so that CPU and GPU give the same bits.
#pragma once

#if defined(__CUDACC__)
#define LUONG_HOST_DEVICE __host__ __device__
#else
#define LUONG_HOST_DEVICE
#endif
