// The checkpoint checksum: FNV-1a 64 over a canonical byte stream of every stored value, in the order
// tensors, ints, floats, strings, each sorted by name (byte order). docs/CHECKPOINT.md gives the exact
// stream and a Python snippet that recomputes it with h5py.
#pragma once
#include <cstdint>
#include <string>

#include "framework/io/state_dict.h"

namespace luong {

class ChecksumBuilder {
 public:
  // `stored` is the tensor as it lies in the file: on the CPU, dtype float32/float64/int64/uint8.
  void add_tensor(const std::string& name, const Tensor& stored);
  void add_int(const std::string& name, int64_t value);
  void add_float(const std::string& name, double value);
  void add_string(const std::string& name, const std::string& value);
  uint64_t value() const { return hash_; }

 private:
  void bytes(const void* data, size_t n);
  void u64(uint64_t v);  // little-endian
  void tag(char kind, const std::string& name);

  uint64_t hash_ = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
};

// The checksum of a whole StateDict in stored form (no bf16 tensors, all on the CPU).
uint64_t checkpoint_checksum(const StateDict& stored);
// 16 lowercase hex digits, as written to the `checksum` root attribute.
std::string checksum_hex(uint64_t value);

}  // namespace luong
