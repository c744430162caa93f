// Helpers shared by the dist tests. Every test runs both as one process (a local group of size 1) and
// under `mpirun -np 2` (an MPI group); tests read size() and compute what they expect from it.
#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include "framework/core/philox.h"
#include "framework/dist/process_group.h"

namespace luong::testing {

// A fresh group for one test. The short watchdog turns a test that desynchronises the ranks into a
// prompt abort instead of a CI job that hangs.
inline std::unique_ptr<ProcessGroup> make_test_group() {
  auto pg = make_process_group("auto", Device::cpu());
  pg->set_timeout(std::chrono::seconds(30));
  return pg;
}

// Uniform values in [lo, hi) from a fixed seed: the same on every rank.
inline std::vector<double> uniform_values(Generator& gen, int64_t n, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * gen.uniform();
  return v;
}

}  // namespace luong::testing
