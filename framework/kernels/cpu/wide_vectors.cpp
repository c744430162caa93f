#include "framework/kernels/cpu/wide_vectors.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace luong::cpu {
namespace {

bool detect_supported() {
  __builtin_cpu_init();  // libgcc's checks include the OS saving the AVX-512 registers (XCR0)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

bool chosen_at_start() {
  if (!wide_vectors_supported()) return false;
  const char* env = std::getenv("LUONG_WIDE_VECTORS");
  if (env && std::strcmp(env, "0") == 0) return false;
  if (env && std::strcmp(env, "1") == 0) return true;
  return __builtin_cpu_is("amd");  // a fixed rule, not a timing: see the header
}

std::atomic<bool>& flag() {
  static std::atomic<bool> on(chosen_at_start());
  return on;
}

}  // namespace

bool wide_vectors_supported() {
  static const bool supported = detect_supported();
  return supported;
}

bool wide_vectors() { return flag().load(std::memory_order_relaxed); }

bool set_wide_vectors(bool on) { return flag().exchange(on && wide_vectors_supported()); }

}  // namespace luong::cpu
