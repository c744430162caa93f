#include "framework/kernels/cpu/wide_vectors.h"

#include <cstdlib>
#include <cstring>

#include "framework/kernels/cpu/path_switch.h"

namespace luong::cpu {
namespace {

bool detect_supported() {
  __builtin_cpu_init();  // libgcc's checks include the OS saving the AVX-512 registers (XCR0)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

// The default where supported: on for AMD (a fixed rule, not a timing: see the header), unless the environment says.
bool on_by_default() {
  __builtin_cpu_init();  // may run before detect_supported: the order of a constructor's arguments is unspecified
  const char* env = std::getenv("LUONG_WIDE_VECTORS");
  if (env && std::strcmp(env, "0") == 0) return false;
  if (env && std::strcmp(env, "1") == 0) return true;
  return __builtin_cpu_is("amd");
}

PathSwitch& path() {
  static PathSwitch s(detect_supported(), on_by_default());
  return s;
}

}  // namespace

bool wide_vectors_supported() { return path().supported(); }

bool wide_vectors() { return path().on(); }

bool set_wide_vectors(bool on) { return path().set(on); }

}  // namespace luong::cpu
