// Restores the CPU thread count (cpu::set_num_threads) a test changed, also when an ASSERT leaves the test early,
// so one test's setting never leaks into the next one of the same executable.
#pragma once
#include "framework/kernels/cpu/parallel.h"

namespace luong::testing {

class ThreadsGuard {
 public:
  ThreadsGuard() : saved_(cpu::num_threads()) {}
  ~ThreadsGuard() { cpu::set_num_threads(saved_); }
  ThreadsGuard(const ThreadsGuard&) = delete;
  ThreadsGuard& operator=(const ThreadsGuard&) = delete;

 private:
  int saved_;
};

}  // namespace luong::testing
