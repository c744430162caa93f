// configure_process (framework/core/process_setup.h) re-execs luong to set variables that libgomp and
// OpenBLAS read only as they load. With OMP_PROC_BIND set, libgomp has already bound the first image's main
// thread to one CPU by then; the re-exec'd image must still see every place the first one saw, or all of
// its threads are bound to that one CPU.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

TEST(ProcessSetup, ReexecKeepsEveryOpenMpPlaceWhenThreadsAreBound) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  if (CPU_COUNT(&mask) < 2) GTEST_SKIP() << "needs 2 CPUs to tell one place from two";
  // No wait policy or spin count: luong re-execs to set its spin count. OMP_DISPLAY_ENV makes each image's
  // libgomp print its places as it loads.
  const RunResult r = run_luong_shell(
      "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u LUONG_NO_REEXEC OMP_PROC_BIND=true OMP_DISPLAY_ENV=true " +
      std::string(LUONG_BINARY) + " --version 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> places;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("OMP_PLACES = ") != std::string::npos) places.push_back(line);
  ASSERT_EQ(places.size(), 2u) << "expected the first image and the re-exec'd one:\n" << r.output;
  EXPECT_EQ(places[1], places[0]) << r.output;
}

// The OMP_NUM_THREADS the re-exec'd image's libgomp read: the last value OMP_DISPLAY_ENV prints (the first
// image prints the one it started with).
std::string threads_luong_ran(const std::string& env) {
  const RunResult r = run_luong_shell(
      "env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS -u OMP_WAIT_POLICY -u "
      "GOMP_SPINCOUNT -u LUONG_NO_REEXEC -u OMP_PROC_BIND OMP_DISPLAY_ENV=true " +
      env + " " + LUONG_BINARY + " --version 2>&1");
  EXPECT_EQ(r.status, 0) << r.output;
  std::string last;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (const size_t at = line.find("OMP_NUM_THREADS = '"); at != std::string::npos)
      last = line.substr(at + 19, line.find('\'', at + 19) - at - 19);
  return last;
}

// A plain `mpirun -np 2 luong train` binds each rank to one core, and `srun --cpus-per-task` confines a task
// to its CPUs: the default is the CPUs this process may use, shared with the ranks a launcher started on the
// node, never the machine's count (that put 2 threads on each rank's one core).
TEST(ProcessSetup, DefaultThreadsAreThisProcesssShareOfItsCpus) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  const int usable = CPU_COUNT(&mask);
  const int machine = static_cast<int>(std::thread::hardware_concurrency());
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  EXPECT_EQ(threads_luong_ran(""), std::to_string(usable)) << "alone: every CPU of its mask";
  EXPECT_EQ(threads_luong_ran("taskset -c " + std::to_string(first)), "1") << "bound to one CPU";
  EXPECT_EQ(threads_luong_ran("OMPI_COMM_WORLD_LOCAL_SIZE=" + std::to_string(machine)), "1")
      << "as many ranks on the node as it has CPUs";
  const int half = std::max(1, machine / 2);
  EXPECT_EQ(threads_luong_ran("MPI_LOCALNRANKS=" + std::to_string(half)),
            std::to_string(std::max(1, std::min(usable, machine / half))))
      << "half as many ranks: about two each (MPICH's variable)";
  EXPECT_EQ(threads_luong_ran("OMP_NUM_THREADS=3 OMPI_COMM_WORLD_LOCAL_SIZE=" + std::to_string(machine)), "3")
      << "the user's setting wins";
}

}  // namespace
}  // namespace luong::testing
