// A process-wide on/off switch for one CPU code path that needs instructions the CPU may lack (luong's AVX-512
// GEMMs, the 512-bit build of the pointwise kernels): it starts at the path's default, can be flipped for A/B
// measurements and tests, and never turns on where the CPU cannot run the path.
#pragma once
#include <atomic>

namespace luong::cpu {

class PathSwitch {
 public:
  PathSwitch(bool supported, bool on_by_default) : supported_(supported), on_(supported && on_by_default) {}
  PathSwitch(const PathSwitch&) = delete;
  PathSwitch& operator=(const PathSwitch&) = delete;

  bool supported() const { return supported_; }
  bool on() const { return on_.load(std::memory_order_relaxed); }
  // Returns the previous setting; turning it on where unsupported leaves it off.
  bool set(bool on) { return on_.exchange(on && supported_); }

 private:
  const bool supported_;
  std::atomic<bool> on_;
};

}  // namespace luong::cpu
