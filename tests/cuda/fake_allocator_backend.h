// A host backend for CachingAllocator (framework/memory/cuda_allocator.h): malloc and free with call
// counts and an optional byte budget, so the caching logic is tested on every machine.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <map>

#include "framework/memory/cuda_allocator.h"

namespace luong::testing {

// A host backend that counts its calls and can refuse allocations above a byte budget.
struct FakeBackend {
  int allocs = 0, frees = 0, syncs = 0;
  size_t in_use = 0, budget = SIZE_MAX;
  std::map<void*, size_t> sizes;

  CachingAllocator::Backend backend() {
    CachingAllocator::Backend b;
    b.alloc = [this](size_t bytes) -> void* {
      if (in_use + bytes > budget) return nullptr;
      void* p = std::malloc(bytes);
      ++allocs, in_use += bytes, sizes[p] = bytes;
      return p;
    };
    b.free = [this](void* p) {
      ++frees, in_use -= sizes[p];
      sizes.erase(p);
      std::free(p);
    };
    b.sync = [this] { ++syncs; };
    return b;
  }
};

}  // namespace luong::testing
