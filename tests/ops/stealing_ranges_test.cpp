// kernels/cpu/stealing_ranges: every unit is handed out exactly once, however the threads race for them;
// a thread alone takes its own contiguous range in order before anyone else's, stealing from the back.
#include "framework/kernels/cpu/stealing_ranges.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace luong::cpu {
namespace {

TEST(StealingRanges, EveryUnitIsHandedOutExactlyOnceUnderRacingThreads) {
  for (int threads : {1, 2, 3, 8})
    for (int64_t count : {0, 1, 5, 64, 10007}) {
      StealingRanges work(count, threads);
      std::vector<std::atomic<int>> taken(static_cast<size_t>(count));
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          // Thread 0 works slowly, so the others finish first and steal from it.
          for (int64_t u = work.next(t); u >= 0; u = work.next(t)) {
            taken[static_cast<size_t>(u)].fetch_add(1);
            if (t == 0) std::this_thread::yield();
          }
        });
      for (auto& th : pool) th.join();
      for (int64_t u = 0; u < count; ++u)
        ASSERT_EQ(taken[static_cast<size_t>(u)].load(), 1)
            << "unit " << u << " of " << count << ", " << threads << " threads";
      EXPECT_EQ(work.next(0), -1);
    }
}

TEST(StealingRanges, OwnRangeFrontToBackThenOthersFromTheBack) {
  StealingRanges work(10, 2);  // thread 0 owns 0..4, thread 1 owns 5..9
  std::vector<int64_t> order;
  for (int64_t u = work.next(0); u >= 0; u = work.next(0)) order.push_back(u);
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4, 9, 8, 7, 6, 5}));
  EXPECT_EQ(work.next(1), -1);

  StealingRanges shared(10, 2);
  EXPECT_EQ(shared.next(1), 5);  // the owner runs forward...
  EXPECT_EQ(shared.next(0), 0);
  for (int i = 0; i < 4; ++i) shared.next(0);  // thread 0 done with 0..4
  EXPECT_EQ(shared.next(0), 9);                // ...while a thief takes from the back
  EXPECT_EQ(shared.next(1), 6);
}

TEST(StealingRanges, RejectsBadArguments) {
  EXPECT_THROW(StealingRanges(-1, 2), std::exception);
  EXPECT_THROW(StealingRanges(4, 0), std::exception);
}

}  // namespace
}  // namespace luong::cpu
