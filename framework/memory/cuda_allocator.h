// The caching allocator behind every CUDA device. cudaMalloc and cudaFree synchronise the device and cost
// tens of microseconds, so a training step must not call them: freed blocks go to per-size-class free
// lists and are handed out again, and after the first step every allocation is a cache hit.
//
// The caching logic knows nothing about CUDA: it draws raw memory from a Backend (cudaMalloc/cudaFree for a
// device, see kernels/cuda/device.cpp), which keeps it testable on machines without a GPU.
// Reuse needs no events because each device has a single stream (see kernels/cuda/device.h).
#pragma once
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/memory/allocator.h"

namespace luong {

class CachingAllocator final : public Allocator {
 public:
  struct Backend {
    std::function<void*(size_t)> alloc;  // nullptr when out of memory (the cache is then dropped and retried)
    std::function<void(void*)> free;
    std::function<void()> sync;          // waits for queued work that may still touch cached blocks
  };

  // `name` appears in error messages ("cuda:0").
  CachingAllocator(std::string name, Backend backend);
  ~CachingAllocator() override;  // returns the cached blocks; live blocks are the owners' business
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  // allocated: requested bytes of live blocks; cached: size-class bytes on the free lists.
  MemoryStats stats() const override;
  void reset_peak() override;
  // Frees every cached block through the backend (after backend.sync).
  void empty_cache() override;

  // The block size actually reserved for a request: multiples of 512 bytes up to 1 MiB, then 8 classes per
  // power of two (at most 12.5% waste), so blocks of nearby sizes share a free list.
  static size_t size_class(size_t bytes);

 private:
  struct Live {
    size_t block;      // size-class bytes
    size_t requested;  // bytes asked for
  };
  void release_cache_locked();

  std::string name_;
  Backend backend_;
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // size class -> cached blocks
  std::unordered_map<void*, Live> live_;
  MemoryStats stats_;
};

}  // namespace luong
