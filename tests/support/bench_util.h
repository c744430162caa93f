// Timing helper shared by benchmarks: best of several runs after a warm-up (the least noisy estimator on
// a shared machine).
#pragma once
#include <algorithm>
#include <chrono>

namespace luong::bench {

template <class F>
double time_best(F&& f, int repeats = 5, double min_seconds = 0.05) {
  f();  // warm-up
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    int iters = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      f();
      ++iters;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < min_seconds);
    best = std::min(best, elapsed / iters);
  }
  return best;
}

}  // namespace luong::bench
