// The CUDA runtime as the rest of luong sees it: devices, the per-device stream, and the global switches
// (TF32, deterministic kernels). Plain C++, no CUDA types; runtime.h has the CUDA-typed half.
//
// Execution model: every kernel, cuBLAS call and copy of a device runs on ONE stream per device, created
// on first use (a blocking stream, so it also orders against the legacy default stream). A single stream
// is what makes the caching allocator safe without events: a freed block can be handed out again at once,
// because any later use of it is queued behind every earlier use. Kernels launch on the calling thread's
// current device (set_device); a process drives one device (one rank per GPU), and its tensors live there.
#pragma once
#include <cstdint>

#include "framework/memory/allocator.h"

namespace luong::cuda {

// Number of visible devices; 0 (never an exception) when there is no driver or no device.
int device_count();
// Makes `index` the calling thread's current device; throws naming the index and the device count.
void set_device(int index);
int current_device();
// Waits for all work queued on the current device's stream.
void synchronize();

// TF32 tensor-core math for float32 GEMMs: about 8x the float32 rate with a 10-bit mantissa in the
// products. Off by default: the CPU parity tests need full float32. A shorthand for the process-wide GEMM
// precision (framework/core/precision.h), the single source of truth: set_tf32(true) selects
// GemmPrecision::tf32, set_tf32(false) GemmPrecision::fp32 (whatever was set before, bf16 included);
// tf32() is gemm_precision() == GemmPrecision::tf32. cuda::gemm passes the matching cuBLAS compute type on
// each call, so every device's handle follows it at once.
void set_tf32(bool on);
bool tf32();

// Deterministic kernels (default on): results are bitwise identical run to run. Off selects faster
// atomic-based variants where they exist (embedding_backward).
void set_deterministic(bool on);
bool deterministic();

// The caching allocator of a device (also reachable as allocator_for(Device::cuda(index))).
Allocator& device_allocator(int index);
// Returns the cached, unused blocks of a device to the driver (after waiting for its stream).
void empty_cache(int index);

}  // namespace luong::cuda
