// Helpers shared by benchmarks: best of several runs after a warm-up (the least noisy estimator on a shared
// machine), and the process's memory as Linux reports it.
#pragma once
#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

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

// A "/proc/self/status" field in MB: "VmRSS" (resident now), "VmHWM" (the peak so far); 0 when absent.
inline double proc_status_mb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return 0.0;
}

}  // namespace luong::bench
