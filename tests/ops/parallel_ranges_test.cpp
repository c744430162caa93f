// cpu::parallel_ranges (kernels/cpu/parallel.h): above the caller's grain it splits a range exactly as
// `#pragma omp parallel for schedule(static)` does; below it the body runs inline and no OpenMP region is
// entered at all. Below-grain kernels used to open a region with a false if-clause, which costs a libgomp
// team start and a futex wake each call (~1,900 a step of the tiny model); the last test holds every op's
// small case, the optimizers and the gradient-norm kernels to zero regions.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "framework/kernels/cpu/elementwise.h"
#include "framework/kernels/cpu/optim_kernels.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/reduce.h"
#include "tests/ops/op_cases.h"
#include "tests/support/threads_guard.h"

#if defined(_OPENMP) && defined(__GNUC__) && !defined(__clang__)
#include <dlfcn.h>
#include <omp.h>

#include <atomic>
#define LUONG_COUNTS_GOMP_REGIONS 1

// Every `#pragma omp parallel` GCC compiles (ours, and OpenBLAS's through the dynamic linker) calls libgomp's
// GOMP_parallel. This executable defines it, counts the call and hands it on to libgomp's.
namespace {
std::atomic<long> g_regions{0};
}
extern "C" void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  using Real = void (*)(void (*)(void*), void*, unsigned, unsigned);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "GOMP_parallel"));
  g_regions.fetch_add(1, std::memory_order_relaxed);
  real(fn, data, num_threads, flags);
}
#endif

namespace luong::cpu {
namespace {

using luong::testing::ThreadsGuard;

#ifdef _OPENMP
TEST(ParallelRanges, SplitsAsAStaticScheduleSplits) {
  ThreadsGuard guard;
  for (int threads : {2, 3, 4}) {
    set_num_threads(threads);
    for (int64_t n : {1, 2, 3, 5, 7, 8, 64, 1001}) {
      std::vector<int> by_pragma(static_cast<size_t>(n), -1), by_ranges(static_cast<size_t>(n), -1);
      std::vector<int> times(static_cast<size_t>(n), 0);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) by_pragma[static_cast<size_t>(i)] = omp_get_thread_num();
      parallel_ranges(n, true, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          by_ranges[static_cast<size_t>(i)] = omp_get_thread_num();
          ++times[static_cast<size_t>(i)];  // each index belongs to one piece: no race
        }
      });
      EXPECT_EQ(by_ranges, by_pragma) << n << " items, " << threads << " threads";
      EXPECT_EQ(times, std::vector<int>(static_cast<size_t>(n), 1)) << n << " items, " << threads << " threads";
    }
  }
}

TEST(ParallelRanges, RunsInlineBelowTheGrainAndInsideARegion) {
  ThreadsGuard guard;
  set_num_threads(2);
  std::vector<std::pair<int64_t, int64_t>> calls;
  bool in_parallel = true;
  parallel_ranges(100, false, [&](int64_t lo, int64_t hi) {
    calls.emplace_back(lo, hi);
    in_parallel = omp_in_parallel();
  });
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 100}}));
  EXPECT_FALSE(in_parallel);

  // Called from a thread of a running team: no nested team, the whole range on the caller.
  std::vector<int> pieces(2, 0);
#pragma omp parallel num_threads(2)
  parallel_ranges(100, true, [&](int64_t lo, int64_t hi) {
    if (lo == 0 && hi == 100) ++pieces[static_cast<size_t>(omp_get_thread_num())];
  });
  EXPECT_EQ(pieces, (std::vector<int>{1, 1}));

  calls.clear();
  parallel_ranges(0, true, [&](int64_t lo, int64_t hi) { calls.emplace_back(lo, hi); });
  EXPECT_TRUE(calls.empty());
}
#endif

#ifdef LUONG_COUNTS_GOMP_REGIONS
TEST(ParallelRanges, SmallKernelsEnterNoOpenMpRegion) {
  ThreadsGuard guard;
  set_num_threads(2);

  // The count sees the library's regions: a kernel above the grain opens one.
  std::vector<float> x(size_t{1} << 20, 1.0f), y(x.size(), 2.0f);
  long before = g_regions.load();
  axpy<float>(static_cast<int64_t>(x.size()), 0.5f, x.data(), y.data());
  EXPECT_GE(g_regions.load() - before, 1) << "the GOMP_parallel counter did not see a split kernel";

  // Every op's gradient-check case (small, float64), forward and backward.
  for (const auto& [name, make] : testing::op_cases()) {
    Generator gen(42);
    testing::OpCase c = make(gen);
    before = g_regions.load();
    testing::weighted_sum(c.f(c.inputs)).backward();
    EXPECT_EQ(g_regions.load() - before, 0) << "op '" << name << "' opened OpenMP regions below the grain";
  }

  // The optimizers' updates and the gradient-norm kernels on a small parameter.
  std::vector<float> p(1000, 0.5f), g(1000, 0.25f), m(1000, 0.0f), v(1000, 0.0f);
  const int64_t n = static_cast<int64_t>(p.size());
  before = g_regions.load();
  sgd_update<float>(n, p.data(), g.data(), 1.0f, nullptr, 0.1f, 0.0f, 0.0f);
  sgd_update<float>(n, p.data(), g.data(), 1.0f, m.data(), 0.1f, 0.9f, 0.0f);
  adam_update<float>(n, p.data(), g.data(), 1.0f, m.data(), v.data(), 0.1f, 0.9f, 0.999f, 1e-8f, 0.0f, false, 0.1f,
                     0.001f);
  EXPECT_GT(sum_squares<float>(n, g.data()), 0.0);
  EXPECT_FALSE(has_non_finite<float>(n, p.data()));
  scale<float>(n, 0.5f, g.data());
  EXPECT_EQ(g_regions.load() - before, 0) << "optimizer or gradient-norm kernels opened OpenMP regions";
}
#endif

}  // namespace
}  // namespace luong::cpu
