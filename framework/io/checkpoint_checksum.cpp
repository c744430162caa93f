#include "framework/io/checkpoint_checksum.h"

#include <cstdio>
#include <cstring>

namespace luong {

void ChecksumBuilder::bytes(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = hash_;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;  // FNV-1a 64 prime
  }
  hash_ = h;
}

void ChecksumBuilder::u64(uint64_t v) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
  bytes(le, 8);
}

void ChecksumBuilder::tag(char kind, const std::string& name) {
  bytes(&kind, 1);
  bytes(name.data(), name.size());
  const char nul = '\0';
  bytes(&nul, 1);
}

void ChecksumBuilder::add_tensor(const std::string& name, const Tensor& stored) {
  LUONG_CHECK(!stored.is_cuda() && stored.dtype() != DType::bf16, "checksum of tensor '", name,
              "' needs its stored form (cpu, not bfloat16), got ", stored.describe());
  tag('T', name);
  const std::string dtype = dtype_name(stored.dtype());
  bytes(dtype.c_str(), dtype.size() + 1);
  u64(static_cast<uint64_t>(stored.dim()));
  for (auto d : stored.shape()) u64(static_cast<uint64_t>(d));
  // The engine runs on little-endian hosts only, so the in-memory bytes are the file's LE bytes.
  if (stored.numel() > 0) bytes(stored.raw(), stored.nbytes());
}

void ChecksumBuilder::add_int(const std::string& name, int64_t value) {
  tag('I', name);
  u64(static_cast<uint64_t>(value));
}

void ChecksumBuilder::add_float(const std::string& name, double value) {
  tag('F', name);
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  u64(bits);
}

void ChecksumBuilder::add_string(const std::string& name, const std::string& value) {
  tag('S', name);
  u64(value.size());
  bytes(value.data(), value.size());
}

uint64_t checkpoint_checksum(const StateDict& stored) {
  ChecksumBuilder b;
  for (const auto& [k, v] : stored.tensors) b.add_tensor(k, v);
  for (const auto& [k, v] : stored.ints) b.add_int(k, v);
  for (const auto& [k, v] : stored.floats) b.add_float(k, v);
  for (const auto& [k, v] : stored.strings) b.add_string(k, v);
  return b.value();
}

std::string checksum_hex(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace luong
