// Float32 test operands: count values uniform in [-1, 1) from luong's counter-based generator, so a seed
// gives the same values on every machine.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/core/philox.h"

namespace luong::testing {

inline std::vector<float> random_floats(int64_t count, uint64_t seed) {
  Generator g(seed);
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& x : v) x = static_cast<float>(g.uniform() * 2.0 - 1.0);
  return v;
}

}  // namespace luong::testing
