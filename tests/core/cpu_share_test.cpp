// The default thread count of one process (framework/core/cpu_share.h): its affinity mask, shared with the
// node's other ranks, read from each launcher's environment.
#include "framework/core/cpu_share.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <map>
#include <string>

namespace luong {
namespace {

std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(CpuShare, ThreadsAreTheUsableCpusButNoMoreThanTheNodesShare) {
  EXPECT_EQ(default_threads(2, 2, 1), 2);      // one process on the whole machine
  EXPECT_EQ(default_threads(2, 1, 2), 1);      // mpirun -np 2 binds each rank to a core
  EXPECT_EQ(default_threads(2, 2, 2), 1);      // two unbound ranks (mpirun --oversubscribe) share 2 cores
  EXPECT_EQ(default_threads(32, 16, 8), 4);    // 8 ranks bound to the two 16-core sockets, 4 each
  EXPECT_EQ(default_threads(128, 16, 8), 16);  // srun --cpus-per-task=16: 16 each
  EXPECT_EQ(default_threads(64, 1, 1), 1);     // taskset -c 0
  EXPECT_EQ(default_threads(2, 2, 4), 1);      // more ranks than cores: one thread, never zero
}

TEST(CpuShare, RanksOnThisNodeComeFromTheLaunchersEnvironment) {
  EXPECT_EQ(ranks_on_this_node(env_of({})), 1);
  EXPECT_EQ(ranks_on_this_node(env_of({{"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}})), 8);
  EXPECT_EQ(ranks_on_this_node(env_of({{"MPI_LOCALNRANKS", "4"}})), 4);
  // Slurm's compressed list, at this node's index.
  const std::string spec = "4(x2),3";
  EXPECT_EQ(ranks_on_this_node(env_of({{"SLURM_STEP_TASKS_PER_NODE", spec}})), 4);  // SLURM_NODEID unset: 0
  EXPECT_EQ(ranks_on_this_node(env_of({{"SLURM_STEP_TASKS_PER_NODE", spec}, {"SLURM_NODEID", "1"}})), 4);
  EXPECT_EQ(ranks_on_this_node(env_of({{"SLURM_STEP_TASKS_PER_NODE", spec}, {"SLURM_NODEID", "2"}})), 3);
  EXPECT_EQ(ranks_on_this_node(env_of({{"SLURM_STEP_TASKS_PER_NODE", spec}, {"SLURM_NODEID", "3"}})), 1);
  // Unreadable values count as no launcher, never as zero ranks.
  for (const char* bad : {"", "0", "-2", "x", "4(x", "4(x0)", "(x2)"})
    EXPECT_EQ(ranks_on_this_node(env_of({{"OMPI_COMM_WORLD_LOCAL_SIZE", bad}, {"SLURM_STEP_TASKS_PER_NODE", bad}})), 1)
        << "'" << bad << "'";
}

TEST(CpuShare, UsableCpusAreTheAffinityMasks) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  cpu_set_t places;
  if (union_of_openmp_places(places)) GTEST_SKIP() << "OMP_PROC_BIND is set: the places decide";
  EXPECT_EQ(usable_cpus(), CPU_COUNT(&mask));
  // Narrowed to one CPU, as a launcher's binding narrows it: one usable CPU.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) {
      CPU_SET(c, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int narrowed = usable_cpus();
  sched_setaffinity(0, sizeof mask, &mask);
  EXPECT_EQ(narrowed, 1);
}

}  // namespace
}  // namespace luong
