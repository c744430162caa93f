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
  for (auto& [id, pool] : pools_)  // the graphs are gone with the process: hand their cached blocks back too
    for (auto& [block, list] : pool.free)
      for (void* p : list) free_[block].push_back(p);
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

void* CachingAllocator::take(FreeLists& lists, size_t block) {
  auto it = lists.find(block);
  if (it == lists.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  return p;
}

bool CachingAllocator::capturing_thread_locked() const {
  return capture_pool_ != 0 && std::this_thread::get_id() == capture_thread_;
}

void* CachingAllocator::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t block = size_class(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  const bool capture = capturing_thread_locked();
  void* p = capture ? take(pools_[capture_pool_].free, block) : nullptr;
  if (!p) p = take(free_, block);
  if (p) {
    stats_.cached -= static_cast<int64_t>(block);
  } else {
    p = backend_.alloc(block);
    // Out of memory: give the cache back and try once more. Not while capturing: returning blocks waits for
    // the device, which a stream under capture cannot do.
    if (!p && stats_.cached > 0 && !capture) {
      release_cache_locked();
      p = backend_.alloc(block);
    }
    LUONG_CHECK(p != nullptr, "out of memory on ", name_, " allocating ", bytes, " bytes (", stats_.allocated,
                " bytes in use by tensors, peak ", stats_.peak, ")");
    ++stats_.num_allocs;
  }
  live_.insert(p, Live{block, bytes, capture ? capture_pool_ : 0});
  stats_.allocated += static_cast<int64_t>(bytes);
  if (stats_.allocated > stats_.peak) stats_.peak = stats_.allocated;
  return p;
}

void CachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const Live* live = live_.find(ptr);
  LUONG_CHECK(live != nullptr, "freeing ", ptr, " on ", name_,
              ", which this allocator did not hand out (or freed twice)");
  LUONG_CHECK(live->requested == bytes, "freeing ", bytes, " bytes at ", ptr, " on ", name_, ", allocated as ",
              live->requested, " bytes");
  const size_t block = live->block;
  int pool = live->pool;
  live_.erase(ptr);
  if (capturing_thread_locked()) pool = capture_pool_;  // adopted: a captured kernel may read it on replay
  stats_.allocated -= static_cast<int64_t>(bytes);
  stats_.cached += static_cast<int64_t>(block);
  if (pool != 0 && !pools_[pool].released) {
    pools_[pool].free[block].push_back(ptr);
  } else {
    free_[block].push_back(ptr);
  }
}

int CachingAllocator::begin_private_pool(int pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  LUONG_CHECK(capture_pool_ == 0, name_, ": a private pool is already being captured into (pool ", capture_pool_, ")");
  if (pool == 0) pool = next_pool_++;
  auto it = pools_.find(pool);
  LUONG_CHECK(pool < next_pool_ && (it == pools_.end() || !it->second.released), name_, ": private pool ", pool,
              " does not exist or was released");
  pools_[pool];
  capture_pool_ = pool;
  capture_thread_ = std::this_thread::get_id();
  return pool;
}

void CachingAllocator::end_private_pool() {
  std::lock_guard<std::mutex> lock(mutex_);
  capture_pool_ = 0;
  capture_thread_ = std::thread::id();
}

void CachingAllocator::release_private_pool(int pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pools_.find(pool);
  if (it == pools_.end()) return;
  LUONG_CHECK(pool != capture_pool_, name_, ": private pool ", pool, " released while being captured into");
  for (auto& [block, list] : it->second.free)
    for (void* p : list) free_[block].push_back(p);
  it->second.free.clear();
  it->second.released = true;  // kept (a few bytes) so that capturing into it again is refused
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
  if (free_.empty()) return;
  // Work queued before the blocks were freed may still read them.
  if (backend_.sync) backend_.sync();
  for (auto& [block, list] : free_) {
    for (void* p : list) backend_.free(p);
    stats_.cached -= static_cast<int64_t>(block * list.size());
  }
  free_.clear();
}

}  // namespace luong
