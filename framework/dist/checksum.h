// FNV-1a (64-bit) hashing, and the cross-rank "is this value the same everywhere?" check built on it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "framework/dist/process_group.h"

namespace luong {

// FNV-1a 64: offset basis 0xcbf29ce484222325, prime 0x100000001b3 (Fowler, Noll, Vo). Cheap and
// byte-order sensitive: two buffers hash equal only if (almost surely) bitwise equal.
class Fnv1a {
 public:
  void add_bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
  }
  template <class T>
  void add_value(T v) {
    add_bytes(&v, sizeof v);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

// FNV-1a over the bytes of a tensor (copied to the host first when it lives on a GPU).
uint64_t tensor_checksum(const Tensor& t);

// All-gathers `value`; if any rank's differs from rank 0's, throws luong::Error (on every rank alike)
// naming `what` and the ranks that differ.
void check_same_on_all_ranks(ProcessGroup& group, uint64_t value, const std::string& what);

}  // namespace luong
