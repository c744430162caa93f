#include "framework/sweep/child_env.h"

#include <algorithm>
#include <cstdlib>

namespace luong::sweep {

int64_t ranks_per_trial(const std::vector<std::string>& launch) {
  for (size_t i = 0; i + 1 < launch.size(); ++i) {
    const std::string& flag = launch[i];
    if (flag != "-np" && flag != "-n" && flag != "--np" && flag != "-c") continue;
    char* end = nullptr;
    const long n = std::strtol(launch[i + 1].c_str(), &end, 10);
    if (end && *end == '\0' && n > 0) return n;
  }
  return 1;
}

std::vector<std::pair<std::string, std::string>> thread_env(int64_t cores, int64_t parallel, int64_t ranks,
                                                            const std::function<const char*(const char*)>& getenv) {
  const int64_t share = std::max<int64_t>(1, cores / std::max<int64_t>(1, parallel * ranks));
  std::vector<std::pair<std::string, std::string>> env;
  const char* omp = getenv("OMP_NUM_THREADS");
  const char* defaulted = getenv("LUONG_OMP_NUM_THREADS_DEFAULTED");
  if (!omp || (defaulted && std::string(defaulted) == "1")) env.emplace_back("OMP_NUM_THREADS", std::to_string(share));
  if (!getenv("OPENBLAS_NUM_THREADS")) env.emplace_back("OPENBLAS_NUM_THREADS", std::to_string(share));
  return env;
}

}  // namespace luong::sweep
