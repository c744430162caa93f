// The CPU allocator: a caching allocator over 64-byte-aligned blocks.
//
// Why cache: a training step allocates and frees the same set of activation buffers every step. Large
// blocks from glibc come from fresh mmap()s, so every step would page-fault its whole working set again.
// Keeping freed blocks in size classes makes the steady-state step allocation-free.
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "framework/memory/allocator.h"
#include "framework/memory/live_blocks.h"

namespace luong {
namespace {

// Size classes: 64-byte multiples up to 4 KiB, then four classes per power of two (<= 25% waste).
size_t size_class(size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) / 64 * 64;
  size_t pow2 = 4096;
  while (pow2 * 2 < bytes) pow2 *= 2;
  const size_t step = pow2 / 4;
  return (bytes + step - 1) / step * step;
}

class CachingCpuAllocator final : public Allocator {
 public:
  ~CachingCpuAllocator() override { empty_cache(); }

  void* allocate(size_t bytes) override {
    if (bytes == 0) return nullptr;
    size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    void* p = nullptr;
    // Best fit among cached blocks up to twice the request: batches of varying lengths then reuse each
    // other's blocks instead of each length growing a size class of its own.
    auto it = free_.lower_bound(cls);
    while (it != free_.end() && it->second.empty()) ++it;
    if (it != free_.end() && it->first <= 2 * cls) {
      p = it->second.back();
      it->second.pop_back();
      stats_.cached -= static_cast<int64_t>(it->first);
      cls = it->first;
    } else {
      p = std::aligned_alloc(64, cls);
      if (!p) {  // give the cache back to the system and retry once
        release_cached_locked();
        p = std::aligned_alloc(64, cls);
      }
      LUONG_CHECK(p != nullptr, "out of CPU memory allocating ", bytes, " bytes (", stats_.allocated,
                  " bytes in use)");
      ++stats_.num_allocs;
    }
    stats_.allocated += static_cast<int64_t>(cls);
    if (stats_.allocated > stats_.peak) stats_.peak = stats_.allocated;
    live_.insert(p, cls);
    return p;
  }

  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    (void)bytes;
    std::lock_guard<std::mutex> lock(mu_);
    const size_t* live = live_.find(ptr);
    LUONG_CHECK(live != nullptr, "CPU allocator: freeing a pointer it did not allocate");
    const size_t cls = *live;
    live_.erase(ptr);
    free_[cls].push_back(ptr);
    stats_.allocated -= static_cast<int64_t>(cls);
    stats_.cached += static_cast<int64_t>(cls);
    // Bound the cache: past the limit, give the largest cached blocks back to the system.
    while (stats_.cached > kMaxCachedBytes && !free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->second.empty()) {
        free_.erase(last);
        continue;
      }
      std::free(last->second.back());
      last->second.pop_back();
      stats_.cached -= static_cast<int64_t>(last->first);
    }
  }

  MemoryStats stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_peak() override {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak = stats_.allocated;
  }
  void empty_cache() override {
    std::lock_guard<std::mutex> lock(mu_);
    release_cached_locked();
  }

 private:
  void release_cached_locked() {
    for (auto& [cls, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    stats_.cached = 0;
  }

  // Enough for a training step's working set of activations on the models luong targets on a CPU.
  static constexpr int64_t kMaxCachedBytes = int64_t{512} << 20;

  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  LiveBlocks<size_t> live_;  // block -> its size class
  MemoryStats stats_;
};

CudaAllocatorFactory g_cuda_factory = nullptr;

}  // namespace

void set_cuda_allocator_factory(CudaAllocatorFactory f) { g_cuda_factory = f; }

Allocator& allocator_for(Device d) {
  // Never destroyed: tensors in static objects may outlive any function-local static.
  static auto* cpu = new CachingCpuAllocator();
  if (d.is_cpu()) return *cpu;
  LUONG_CHECK(g_cuda_factory != nullptr, "device ", d.name(),
              " requested but this build has no CUDA backend (configure with -DLUONG_CUDA=ON)");
  return g_cuda_factory(d.index);
}

}  // namespace luong
