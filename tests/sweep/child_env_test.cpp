// Threads of trial processes: the machine's cores shared among parallel trials and MPI ranks.
#include <gtest/gtest.h>

#include <map>

#include "framework/sweep/child_env.h"

namespace luong::sweep {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

Env env_with(int64_t cores, int64_t parallel, int64_t ranks, std::map<std::string, std::string> vars) {
  return thread_env(cores, parallel, ranks, [&](const char* k) -> const char* {
    const auto it = vars.find(k);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(SweepChildEnv, CoresAreSharedUnlessTheUserChose) {
  EXPECT_EQ(env_with(16, 4, 1, {}), (Env{{"OMP_NUM_THREADS", "4"}, {"OPENBLAS_NUM_THREADS", "4"}}));
  EXPECT_EQ(env_with(16, 2, 4, {}), (Env{{"OMP_NUM_THREADS", "2"}, {"OPENBLAS_NUM_THREADS", "2"}}));
  EXPECT_EQ(env_with(2, 3, 1, {}), (Env{{"OMP_NUM_THREADS", "1"}, {"OPENBLAS_NUM_THREADS", "1"}}));  // never 0
  // The user's settings are left alone...
  EXPECT_EQ(env_with(16, 4, 1, {{"OMP_NUM_THREADS", "3"}}), (Env{{"OPENBLAS_NUM_THREADS", "4"}}));
  EXPECT_EQ(env_with(16, 4, 1, {{"OMP_NUM_THREADS", "3"}, {"OPENBLAS_NUM_THREADS", "1"}}), Env{});
  // ...but luong's own default for OMP_NUM_THREADS (all cores) is divided.
  EXPECT_EQ(env_with(16, 4, 1, {{"OMP_NUM_THREADS", "16"}, {"LUONG_OMP_NUM_THREADS_DEFAULTED", "1"}}),
            (Env{{"OMP_NUM_THREADS", "4"}, {"OPENBLAS_NUM_THREADS", "4"}}));
}

TEST(SweepChildEnv, RanksFromTheLaunchPrefix) {
  EXPECT_EQ(ranks_per_trial({}), 1);
  EXPECT_EQ(ranks_per_trial({"mpirun", "-np", "4"}), 4);
  EXPECT_EQ(ranks_per_trial({"mpirun", "--oversubscribe", "-n", "2", "--bind-to", "none"}), 2);
  EXPECT_EQ(ranks_per_trial({"srun", "--exclusive"}), 1);
  EXPECT_EQ(ranks_per_trial({"mpirun", "-np"}), 1);
  EXPECT_EQ(ranks_per_trial({"mpirun", "-np", "x4"}), 1);
}

}  // namespace
}  // namespace luong::sweep
