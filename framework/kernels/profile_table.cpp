#include "framework/kernels/profile_table.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace luong {

bool profile_requested_by_environment() {
  const char* env = std::getenv("LUONG_PROFILE");
  return env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
}

int64_t profile_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace luong
