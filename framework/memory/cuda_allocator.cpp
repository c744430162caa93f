#include "framework/memory/cuda_allocator.h"

#include <bit>

#include "framework/core/error.h"

namespace luong {

CachingAllocator::CachingAllocator(std::string name, Backend backend)
    : name_(std::move(name)), backend_(std::move(backend)) {
  LUONG_CHECK(backend_.alloc && backend_.free, "CachingAllocator for ", name_, " needs alloc and free functions");
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cache_locked();
}

size_t CachingAllocator::size_class(size_t bytes) {
  constexpr size_t kSmallStep = 512, kSmallLimit = size_t{1} << 20;
  if (bytes <= kSmallLimit) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  // Above 1 MiB: [2^e, 2^(e+1)) is cut into 8 equal classes.
  const size_t top = std::bit_floor(bytes);
  const size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t block = size_class(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* p = nullptr;
  auto it = free_.find(block);
  if (it != free_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    stats_.cached -= static_cast<int64_t>(block);
  } else {
    p = backend_.alloc(block);
    if (!p && stats_.cached > 0) {  // out of memory: give the cache back and try once more
      release_cache_locked();
      p = backend_.alloc(block);
    }
    LUONG_CHECK(p != nullptr, "out of memory on ", name_, " allocating ", bytes, " bytes (", stats_.allocated,
                " bytes in use by tensors, peak ", stats_.peak, ")");
    ++stats_.num_allocs;
  }
  live_[p] = Live{block, bytes};
  stats_.allocated += static_cast<int64_t>(bytes);
  if (stats_.allocated > stats_.peak) stats_.peak = stats_.allocated;
  return p;
}

void CachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  LUONG_CHECK(it != live_.end(), "freeing ", ptr, " on ", name_,
              ", which this allocator did not hand out (or freed twice)");
  LUONG_CHECK(it->second.requested == bytes, "freeing ", bytes, " bytes at ", ptr, " on ", name_, ", allocated as ",
              it->second.requested, " bytes");
  const size_t block = it->second.block;
  live_.erase(it);
  stats_.allocated -= static_cast<int64_t>(bytes);
  stats_.cached += static_cast<int64_t>(block);
  free_[block].push_back(ptr);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak = stats_.allocated;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cache_locked();
}

void CachingAllocator::release_cache_locked() {
  if (stats_.cached == 0) return;
  // Work queued before the blocks were freed may still read them.
  if (backend_.sync) backend_.sync();
  for (auto& [block, list] : free_) {
    for (void* p : list) backend_.free(p);
    list.clear();
  }
  free_.clear();
  stats_.cached = 0;
}

}  // namespace luong
