// NumPy's default random generator, `np.random.default_rng(seed)` (numpy 1.17 to 2.x: SeedSequence seeding a
// PCG64 bit generator), for the draws sacreBLEU's significance tests make: `rng.choice(n, size, replace=True)`
// (bounded integers by Lemire's method) and `rng.integers(2, size, dtype=bool)`. The same seed gives the same
// resamples as sacreBLEU, so `luong bleu --paired-bs` reproduces its p-values and confidence intervals.
//
//   NumpyGenerator rng(12345);
//   int64_t i = rng.below(37);  // one entry of rng.choice(37, size=...), in the order numpy fills the array
//   bool b = rng.coin();        // one entry of rng.integers(2, size=..., dtype=bool)
//
// The two kinds of draw must not be interleaved within one numpy call's worth of entries: numpy keeps a separate
// bit buffer for each call, as this class does for each kind (reset by `start_array`).
#pragma once
#include <cstdint>

namespace luong::significance {

class NumpyGenerator {
 public:
  explicit NumpyGenerator(uint64_t seed);

  uint64_t next_uint64();
  // PCG64's 32-bit draws: the low half of a 64-bit output, then its high half.
  uint32_t next_uint32();

  // An integer uniform in [0, n), 1 <= n <= 2^32 (numpy's Lemire rejection on 32-bit draws).
  int64_t below(int64_t n);
  // A fair coin from one bit of a buffered 32-bit draw (numpy's bool path).
  bool coin();
  // Where a numpy call that fills a new array starts: its bit buffers are empty.
  void start_array() { coin_bits_ = 0; }

 private:
  unsigned __int128 state_ = 0, inc_ = 0;
  bool has_half_ = false;  // PCG64's buffered high half
  uint32_t half_ = 0;
  int coin_bits_ = 0;  // bits left in coin_buffer_
  uint32_t coin_buffer_ = 0;
};

}  // namespace luong::significance
