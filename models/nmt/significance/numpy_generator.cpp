// The algorithms NumPy documents for SeedSequence (randomgen's hash mixing with a 4-word pool), PCG64
// (a 128-bit LCG with the XSL-RR output function) and its bounded integer draws; checked against numpy's own
// outputs by tests/bleu/significance_test.cpp.
#include "models/nmt/significance/numpy_generator.h"

#include <array>
#include <vector>

#include "framework/core/error.h"

namespace luong::significance {
namespace {

// SeedSequence's constants.
constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr int kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t r = kMixMultL * x - kMixMultR * y;
  return r ^ (r >> kXShift);
}

// SeedSequence(seed).generate_state(4, np.uint64): the seed as little-endian 32-bit words mixed into the pool,
// the pool then hashed out into eight words read as four little-endian 64-bit ones.
std::array<uint64_t, 4> seed_sequence_state(uint64_t seed) {
  std::vector<uint32_t> entropy;
  do {
    entropy.push_back(static_cast<uint32_t>(seed));
    seed >>= 32;
  } while (seed != 0);
  std::array<uint32_t, kPoolSize> pool{};
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(i < static_cast<int>(entropy.size()) ? entropy[i] : 0, hash_const);
  for (int src = 0; src < kPoolSize; ++src)
    for (int dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
  for (size_t src = kPoolSize; src < entropy.size(); ++src)
    for (int dst = 0; dst < kPoolSize; ++dst) pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));

  std::array<uint32_t, 8> words{};
  uint32_t out_const = kInitB;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = pool[i % kPoolSize];
    v ^= out_const;
    out_const *= kMultB;
    v *= out_const;
    v ^= v >> kXShift;
    words[i] = v;
  }
  std::array<uint64_t, 4> state{};
  for (int i = 0; i < 4; ++i)
    state[i] = static_cast<uint64_t>(words[2 * i]) | static_cast<uint64_t>(words[2 * i + 1]) << 32;
  return state;
}

constexpr unsigned __int128 kPcgMultiplier =
    (static_cast<unsigned __int128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;

unsigned __int128 u128(uint64_t high, uint64_t low) { return (static_cast<unsigned __int128>(high) << 64) | low; }

}  // namespace

NumpyGenerator::NumpyGenerator(uint64_t seed) {
  const std::array<uint64_t, 4> s = seed_sequence_state(seed);
  // pcg64_set_seed: the first two words are the initial state, the last two the stream.
  inc_ = (u128(s[2], s[3]) << 1) | 1;
  state_ = 0;
  state_ = state_ * kPcgMultiplier + inc_;
  state_ += u128(s[0], s[1]);
  state_ = state_ * kPcgMultiplier + inc_;
}

uint64_t NumpyGenerator::next_uint64() {
  state_ = state_ * kPcgMultiplier + inc_;
  const uint64_t folded = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
  const unsigned rot = static_cast<unsigned>(state_ >> 122);
  return (folded >> rot) | (folded << ((64 - rot) & 63));
}

uint32_t NumpyGenerator::next_uint32() {
  if (has_half_) {
    has_half_ = false;
    return half_;
  }
  const uint64_t v = next_uint64();
  has_half_ = true;
  half_ = static_cast<uint32_t>(v >> 32);
  return static_cast<uint32_t>(v);
}

int64_t NumpyGenerator::below(int64_t n) {
  LUONG_CHECK(n >= 1 && n <= (int64_t{1} << 32), "NumpyGenerator::below: n = ", n, " is outside [1, 2^32]");
  if (n == 1) return 0;
  if (n == (int64_t{1} << 32)) return next_uint32();
  const uint32_t range = static_cast<uint32_t>(n);  // numpy's rng + 1
  uint64_t m = static_cast<uint64_t>(next_uint32()) * range;
  uint32_t leftover = static_cast<uint32_t>(m);
  if (leftover < range) {
    const uint32_t threshold = (UINT32_MAX - (range - 1)) % range;
    while (leftover < threshold) {
      m = static_cast<uint64_t>(next_uint32()) * range;
      leftover = static_cast<uint32_t>(m);
    }
  }
  return static_cast<int64_t>(m >> 32);
}

bool NumpyGenerator::coin() {
  if (coin_bits_ == 0) {
    coin_buffer_ = next_uint32();
    coin_bits_ = 31;
  } else {
    coin_buffer_ >>= 1;
    --coin_bits_;
  }
  return (coin_buffer_ & 1u) != 0;
}

}  // namespace luong::significance
