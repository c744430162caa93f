// The CPU allocator: a caching allocator over 64-byte-aligned blocks.
//
// Why cache: a training step allocates and frees the same set of activation buffers every step. Large
// blocks from glibc come from fresh mmap()s, so every step would page-fault its whole working set again.
// Keeping freed blocks in size classes makes the steady-state step allocation-free.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "framework/memory/allocator.h"
#include "framework/memory/live_blocks.h"

namespace luong {
namespace {

// Size classes: 64-byte multiples up to 4 KiB (classes 0-63), then four classes per power of two (<= 25% waste):
// class 64 + 4q + r holds (4096 << q) / 4 * (5 + r) bytes. The largest class is 2^62 bytes.
constexpr int kSmallClasses = 64;
constexpr int kClasses = kSmallClasses + 4 * 50;
constexpr size_t kLargestRequest = size_t{1} << 62;

int class_index(size_t bytes) {
  if (bytes <= 4096) return static_cast<int>((bytes + 63) / 64) - 1;
  int q = 0;
  size_t pow2 = 4096;  // bytes in (pow2, 2 pow2]
  while (pow2 * 2 < bytes) pow2 *= 2, ++q;
  const size_t step = pow2 / 4;
  return kSmallClasses + 4 * q + static_cast<int>((bytes + step - 1) / step) - 5;
}

size_t class_bytes(int index) {
  if (index < kSmallClasses) return static_cast<size_t>(index + 1) * 64;
  const int q = (index - kSmallClasses) / 4, r = (index - kSmallClasses) % 4;
  return (size_t{4096} << q) / 4 * static_cast<size_t>(5 + r);
}

class CachingCpuAllocator final : public Allocator {
 public:
  ~CachingCpuAllocator() override { empty_cache(); }

  void* allocate(size_t bytes) override {
    if (bytes == 0) return nullptr;
    LUONG_CHECK(bytes <= kLargestRequest, "out of CPU memory allocating ", bytes, " bytes");
    int index = class_index(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    void* p = nullptr;
    // Best fit among cached blocks up to twice the request: batches of varying lengths then reuse each
    // other's blocks instead of each length growing a size class of its own.
    const int cached = first_cached_from(index);
    if (cached >= 0 && class_bytes(cached) <= 2 * class_bytes(index)) {
      index = cached;
      p = pop(index);
      stats_.cached -= static_cast<int64_t>(class_bytes(index));
    } else {
      const size_t size = class_bytes(index);
      p = std::aligned_alloc(64, size);
      if (!p) {  // give the cache back to the system and retry once
        release_cached_locked();
        p = std::aligned_alloc(64, size);
      }
      LUONG_CHECK(p != nullptr, "out of CPU memory allocating ", bytes, " bytes (", stats_.allocated,
                  " bytes in use)");
      ++stats_.num_allocs;
    }
    stats_.allocated += static_cast<int64_t>(class_bytes(index));
    if (stats_.allocated > stats_.peak) stats_.peak = stats_.allocated;
    live_.insert(p, index);
    return p;
  }

  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    (void)bytes;
    std::lock_guard<std::mutex> lock(mu_);
    const int* live = live_.find(ptr);
    LUONG_CHECK(live != nullptr, "CPU allocator: freeing a pointer it did not allocate");
    const int index = *live;
    live_.erase(ptr);
    free_[static_cast<size_t>(index)].push_back(ptr);
    nonempty_[static_cast<size_t>(index) / 64] |= uint64_t{1} << (index % 64);
    stats_.allocated -= static_cast<int64_t>(class_bytes(index));
    stats_.cached += static_cast<int64_t>(class_bytes(index));
    // Bound the cache: past the limit, give the largest cached blocks back to the system.
    while (stats_.cached > kMaxCachedBytes) {
      const int largest = last_cached();
      std::free(pop(largest));
      stats_.cached -= static_cast<int64_t>(class_bytes(largest));
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
  // The smallest class >= index with a cached block, or -1.
  int first_cached_from(int index) const {
    for (size_t w = static_cast<size_t>(index) / 64; w < nonempty_.size(); ++w) {
      uint64_t bits = nonempty_[w];
      if (w == static_cast<size_t>(index) / 64) bits &= ~uint64_t{0} << (index % 64);
      if (bits) return static_cast<int>(w * 64) + __builtin_ctzll(bits);
    }
    return -1;
  }

  // The largest class with a cached block (there is one).
  int last_cached() const {
    for (size_t w = nonempty_.size(); w-- > 0;)
      if (nonempty_[w]) return static_cast<int>(w * 64) + 63 - __builtin_clzll(nonempty_[w]);
    LUONG_CHECK(false, "CPU allocator: the cache counts bytes but holds no block");
    return -1;
  }

  // The most recently freed block of a class that has one (the one likeliest still in cache).
  void* pop(int index) {
    std::vector<void*>& list = free_[static_cast<size_t>(index)];
    void* p = list.back();
    list.pop_back();
    if (list.empty()) nonempty_[static_cast<size_t>(index) / 64] &= ~(uint64_t{1} << (index % 64));
    return p;
  }

  void release_cached_locked() {
    for (auto& list : free_) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    nonempty_.fill(0);
    stats_.cached = 0;
  }

  // Enough for a training step's working set of activations on the models luong targets on a CPU.
  static constexpr int64_t kMaxCachedBytes = int64_t{512} << 20;

  mutable std::mutex mu_;
  // Cached blocks by size class, and a bit per class that has any: finding the best fit is a bit scan (a
  // std::map of lists, empty ones kept, was walked entry by entry).
  std::array<std::vector<void*>, kClasses> free_;
  std::array<uint64_t, (kClasses + 63) / 64> nonempty_{};
  LiveBlocks<int> live_;  // block -> its size class
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
