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
#include <thread>
#include <unordered_map>
#include <vector>

#include "framework/memory/allocator.h"
#include "framework/memory/live_blocks.h"

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

  // Private pools, for CUDA graphs (kernels/cuda/graph.h). A graph's replays write and read the addresses its
  // capture saw, so every block the capture touched must serve nothing else while the graph lives.
  // - begin_private_pool(): until end_private_pool(), allocations by the calling thread come from the pool
  //   (its free blocks, then the shared cache, then the system; a block taken becomes the pool's), and a
  //   block that thread frees joins the pool whatever its origin: a captured kernel may read it on every
  //   replay. Other threads keep the shared cache. Pass an id to capture into an existing pool again.
  // - After end_private_pool() the pool keeps its blocks: its live blocks return to it when freed, and its
  //   free blocks serve only a later capture into it.
  // - release_private_pool(id), once the graph is destroyed: the pool's free blocks go to the shared cache,
  //   and its live blocks go there when freed.
  // Pool blocks count in stats().cached while free; empty_cache() leaves them alone.
  int begin_private_pool(int pool = 0);
  void end_private_pool();
  void release_private_pool(int pool);

  // The block size actually reserved for a request: multiples of 512 bytes up to 1 MiB, then 8 classes per
  // power of two (at most 12.5% waste), so blocks of nearby sizes share a free list.
  static size_t size_class(size_t bytes);

 private:
  using FreeLists = std::unordered_map<size_t, std::vector<void*>>;  // size class -> cached blocks
  struct Live {
    size_t block;      // size-class bytes
    size_t requested;  // bytes asked for
    int pool;          // 0: the shared cache
  };
  struct Pool {
    FreeLists free;
    bool released = false;  // its graph is gone: freed blocks go to the shared cache
  };
  static void* take(FreeLists& lists, size_t block);
  bool capturing_thread_locked() const;
  void release_cache_locked();

  std::string name_;
  Backend backend_;
  mutable std::mutex mutex_;
  FreeLists free_;  // the shared cache
  LiveBlocks<Live> live_;
  std::unordered_map<int, Pool> pools_;
  int next_pool_ = 1;
  int capture_pool_ = 0;  // the pool being captured into (0: none), by capture_thread_
  std::thread::id capture_thread_;
  MemoryStats stats_;
};

}  // namespace luong
