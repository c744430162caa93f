// The live-block table of a caching allocator: block address -> what the allocator recorded for it.
//
// Why not a plain unordered_map: it allocates a heap node on every insert and frees it on every erase, so
// each tensor cost one malloc and one free beyond its (cached) storage. This table keeps erased nodes (C++17
// node handles) and reuses them, so once the first step has run, a step's tensors make no heap calls here.
// Not thread-safe: the allocators call it under their own lock. Alloc is the map's allocator (tests count
// its calls).
#pragma once
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace luong {

template <class Info, class Alloc = std::allocator<std::pair<void* const, Info>>>
class LiveBlocks {
 public:
  void insert(void* block, const Info& info) {
    if (spare_.empty()) {
      map_.emplace(block, info);
      return;
    }
    auto node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = block;
    node.mapped() = info;
    map_.insert(std::move(node));
  }

  // The record of a live block, or nullptr when the allocator did not hand it out (or it was freed).
  const Info* find(void* block) const {
    const auto it = map_.find(block);
    return it == map_.end() ? nullptr : &it->second;
  }

  // Forgets a block, keeping its node for the next insert; a block that is not live is left alone (an empty
  // node handle must never reach insert).
  void erase(void* block) {
    if (auto node = map_.extract(block)) spare_.push_back(std::move(node));
  }

 private:
  using Map = std::unordered_map<void*, Info, std::hash<void*>, std::equal_to<void*>, Alloc>;
  Map map_;
  std::vector<typename Map::node_type> spare_;
};

}  // namespace luong
