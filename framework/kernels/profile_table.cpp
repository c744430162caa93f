#include "framework/kernels/profile_table.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "framework/dist/bootstrap.h"

namespace luong {

bool profile_requested_by_environment() {
  const char* env = std::getenv("LUONG_PROFILE");
  return env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
}

int64_t profile_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string profile_heading(const char* title) {
  // The hints read MPI when it is up and the launcher's environment otherwise (also after MPI_Finalize, when
  // the tables print at exit).
  const int size = world_size_hint();
  std::string heading = std::string(title) + " (LUONG_PROFILE";
  if (size > 1) heading += ", rank " + std::to_string(world_rank_hint()) + " of " + std::to_string(size);
  return heading + "):";
}

}  // namespace luong
