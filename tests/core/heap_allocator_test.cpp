// The build's choice of malloc took effect: with LUONG_WITH_JEMALLOC every library in the process (libc's own
// callers and OpenBLAS's included) must be bound to jemalloc, not only luong's code; linking it after libc, or
// dropping it at link time, would leave glibc's malloc in place with nothing else failing.
#include "framework/core/heap_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/support/run_luong.h"

namespace luong::testing {
namespace {

TEST(HeapAllocator, NamesTheMallocThisProcessRunsOn) {
  const std::string name = heap_allocator_name();
#ifdef LUONG_WITH_JEMALLOC
  EXPECT_TRUE(heap_allocator_is_jemalloc()) << name;
  EXPECT_EQ(name.rfind("jemalloc ", 0), 0u) << name;
#else
  EXPECT_FALSE(heap_allocator_is_jemalloc()) << name;
  EXPECT_NE(name, "unknown");
#endif
  // Memory that libc allocates internally is freed by whichever malloc is bound, so both must be the same one:
  // a mixed binding would crash here (or be reported by ASan).
  char* copy = strdup("luong");
  ASSERT_NE(copy, nullptr);
  std::free(copy);
}

TEST(HeapAllocator, TheProgramReportsItInItsVersion) {
  const RunResult r = run_luong_shell(std::string(LUONG_BINARY) + " --version 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("luong " LUONG_VERSION " (malloc: "), std::string::npos) << r.output;
#ifdef LUONG_WITH_JEMALLOC
  EXPECT_NE(r.output.find("(malloc: jemalloc "), std::string::npos) << r.output;
#endif
}

}  // namespace
}  // namespace luong::testing
