// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011).
// Counter-based: the whole generator state is (seed, offset), two integers a checkpoint can hold, and
// element i of a draw is a pure function of (seed, offset, i), so CPU and CUDA produce the same stream.
#pragma once
#include <cstdint>

#include "framework/core/host_device.h"

namespace luong {

struct Philox4x32 {
  uint32_t v[4];
};

// The round's multipliers and the key's Weyl increments (Salmon et al. 2011); also read by the CPU's vector
// version (kernels/cpu/philox_blocks.cpp), which must give these bits.
constexpr uint32_t kPhiloxMul0 = 0xD2511F53u, kPhiloxMul1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9u, kPhiloxWeyl1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

LUONG_HOST_DEVICE inline Philox4x32 philox4x32_10(uint64_t counter_lo, uint64_t counter_hi, uint64_t seed) {
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < kPhiloxRounds; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxMul0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxMul1) * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  return {{c0, c1, c2, c3}};
}

// Uniform in [0, 1) with 24 random bits (exactly representable in float).
LUONG_HOST_DEVICE inline float philox_uniform(uint32_t bits) { return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f); }

// The i-th uniform of a draw that starts at `offset` (in units of 4 values) under `seed`.
LUONG_HOST_DEVICE inline float philox_uniform_at(uint64_t seed, uint64_t offset, uint64_t i) {
  const Philox4x32 r = philox4x32_10(offset + i / 4, 0, seed);
  return philox_uniform(r.v[i % 4]);
}

// A generator: (seed, offset). Each draw of n values advances offset by ceil(n / 4), so a draw never
// reuses the counters of an earlier one.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0, uint64_t offset = 0) : seed_(seed), offset_(offset) {}
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_state(uint64_t seed, uint64_t offset) { seed_ = seed, offset_ = offset; }
  // Reserves n values; returns the offset at which the caller's draw starts.
  uint64_t reserve(uint64_t n) {
    const uint64_t start = offset_;
    offset_ += (n + 3) / 4;
    return start;
  }
  float uniform() { return philox_uniform_at(seed_, reserve(1), 0); }
  // Uniform integer in [0, n) (slight modulo bias is irrelevant for shuffles of < 2^32 items).
  uint64_t below(uint64_t n) {
    const uint64_t start = reserve(4);
    const Philox4x32 r = philox4x32_10(start, 0, seed_);
    const uint64_t x = (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
    return x % n;
  }
  // Standard normal via Box-Muller.
  double normal();

 private:
  uint64_t seed_;
  uint64_t offset_;
};

}  // namespace luong
