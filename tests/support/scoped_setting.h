// Sets a process-wide switch for one scope and restores the value it had, also when an ASSERT leaves the test
// early. For the engine's setters that return the previous value (set_packed_gemm_enabled, set_bf16_kernel,
// set_bf16_weight_copies_enabled, ...):
//   const ScopedSetting<bool> unpacked(cpu::set_packed_gemm_enabled, false);
#pragma once

namespace luong::testing {

template <class T>
class ScopedSetting {
 public:
  using Setter = T (*)(T);
  ScopedSetting(Setter set, T value) : set_(set), before_(set(value)) {}
  ~ScopedSetting() { set_(before_); }
  ScopedSetting(const ScopedSetting&) = delete;
  ScopedSetting& operator=(const ScopedSetting&) = delete;

 private:
  Setter set_;
  T before_;
};

}  // namespace luong::testing
