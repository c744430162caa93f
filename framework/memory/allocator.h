// Per-device allocator interface. The CPU allocator is a thin aligned malloc; the CUDA backend provides a
// caching allocator behind the same interface, so tensors never care where their bytes come from.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "framework/core/dtype.h"

namespace luong {

struct MemoryStats {
  int64_t allocated = 0;  // bytes held by live tensors
  int64_t cached = 0;     // bytes kept by the allocator for reuse (not held by tensors)
  int64_t peak = 0;       // high-water mark of `allocated`
  int64_t num_allocs = 0; // calls that reached the system allocator (cudaMalloc / aligned_alloc)
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak() = 0;
  // Returns every cached block to the system. For after set-up: the initialisation's temporaries and the
  // parameters' storage before flattening have sizes no training step asks for again, and on a CPU each
  // cached block counts in the process's RSS for good.
  virtual void empty_cache() = 0;
};

// The allocator for a device; CUDA devices throw unless the CUDA backend is compiled in.
Allocator& allocator_for(Device d);

// Registered by the CUDA backend at static-initialisation time when it is compiled in.
using CudaAllocatorFactory = Allocator& (*)(int device_index);
void set_cuda_allocator_factory(CudaAllocatorFactory f);

}  // namespace luong
