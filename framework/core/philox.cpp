#include "framework/core/philox.h"

#include <cmath>

namespace luong {

double Generator::normal() {
  const uint64_t start = reserve(4);
  const Philox4x32 r = philox4x32_10(start, 0, seed_);
  const double u1 = (static_cast<double>(r.v[0]) + 1.0) / 4294967297.0;  // (0, 1]
  const double u2 = static_cast<double>(r.v[1]) / 4294967296.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace luong
