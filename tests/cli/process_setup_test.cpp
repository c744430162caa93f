// configure_process (framework/core/process_setup.h) re-execs luong to set variables that libgomp and
// OpenBLAS read only as they load. With OMP_PROC_BIND set, libgomp has already bound the first image's main
// thread to one CPU by then; the re-exec'd image must still see every place the first one saw, or all of
// its threads are bound to that one CPU.
#include <gtest/gtest.h>
#include <sched.h>

#include <sstream>
#include <string>
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

}  // namespace
}  // namespace luong::testing
