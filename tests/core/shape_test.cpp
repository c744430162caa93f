// Shape (framework/core/shape.h): the inline extents every tensor carries. Its edits behave as std::vector's,
// a rank beyond the limit is a clear error, and copying or viewing a tensor makes no heap allocation (the reason
// it is not a std::vector).
#include "framework/core/shape.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace {
// Global operator new for this test binary, counting the calls made while a test asks for it (this thread only).
thread_local bool g_counting = false;
std::atomic<int> g_heap_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting) g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// The matching deletes, so that sanitizers see new and delete agree. GCC cannot tell that the new above uses malloc
// and warns of a mismatch at each inlined call; it is not one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace luong {
namespace {

class CountHeapAllocations {
 public:
  CountHeapAllocations() : start_(g_heap_allocations.load()) { g_counting = true; }
  ~CountHeapAllocations() { g_counting = false; }
  int count() const { return g_heap_allocations.load() - start_; }

 private:
  int start_;
};

void expect_same(const Shape& s, const std::vector<int64_t>& v, const std::string& after) {
  ASSERT_EQ(s.size(), v.size()) << after;
  EXPECT_EQ(s.empty(), v.empty()) << after;
  EXPECT_EQ(std::vector<int64_t>(s.begin(), s.end()), v) << after;
  EXPECT_EQ(s.to_vector(), v) << after;
  EXPECT_TRUE(s == Shape(v)) << after;
  if (!v.empty()) {
    EXPECT_EQ(s.back(), v.back()) << after;
  }
}

TEST(Shape, EditsMatchStdVector) {
  Shape s;
  std::vector<int64_t> v;
  std::mt19937 rng(7);  // fixed seed: the same sequence of edits every run
  for (int step = 0; step < 2000; ++step) {
    const uint32_t r = static_cast<uint32_t>(rng());
    const int64_t value = static_cast<int64_t>(r % 1000);
    const size_t at = v.empty() ? 0 : (r >> 12) % (v.size() + 1);
    std::string what;
    switch ((r >> 24) % 5) {
      case 0:
        if (v.size() == Shape::kMaxRank) continue;
        s.push_back(value), v.push_back(value), what = "push_back";
        break;
      case 1:
        if (v.size() == Shape::kMaxRank) continue;
        s.insert(s.begin() + at, value), v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), value);
        what = "insert at " + std::to_string(at);
        break;
      case 2: {
        if (v.empty()) continue;
        const size_t index = at % v.size();
        s.erase(s.begin() + index), v.erase(v.begin() + static_cast<std::ptrdiff_t>(index));
        what = "erase at " + std::to_string(index);
        break;
      }
      case 3:
        if (v.empty()) continue;
        s.pop_back(), v.pop_back(), what = "pop_back";
        break;
      default: {
        const size_t n = (r >> 4) % (Shape::kMaxRank + 1);  // grows as well as shrinks
        s.resize(n, value), v.resize(n, value), what = "resize to " + std::to_string(n);
      }
    }
    expect_same(s, v, what + " at step " + std::to_string(step));
    if (HasFailure()) return;
  }
}

TEST(Shape, EqualityComparesRankAndExtents) {
  EXPECT_TRUE((Shape{2, 3} == Shape{2, 3}));
  EXPECT_FALSE((Shape{2, 3} == Shape{3, 2}));
  EXPECT_FALSE((Shape{2, 3} == Shape{2, 3, 1}));
  EXPECT_FALSE((Shape{} == Shape{1}));
  Shape shrunk{2, 3, 4};
  shrunk.pop_back();
  EXPECT_TRUE((shrunk == Shape{2, 3})) << "a removed extent is not compared";
  EXPECT_EQ(shape_str(Shape{2, 3, 4}), "(2, 3, 4)");
}

TEST(Shape, RankBeyondTheLimitIsAClearError) {
  Shape s(std::vector<int64_t>(Shape::kMaxRank, 1));
  try {
    s.push_back(1);
    FAIL() << "a rank above " << Shape::kMaxRank << " was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 8 dimensions"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Shape(std::vector<int64_t>(Shape::kMaxRank + 1, 1)), Error);
  EXPECT_THROW(s.resize(Shape::kMaxRank + 1), Error);
  Tensor t = Tensor::zeros({2, 2});
  EXPECT_THROW(t.view({1, 1, 1, 1, 1, 1, 1, 2, 2}), Error);
}

TEST(Shape, CopyingAndViewingATensorMakesNoHeapAllocation) {
  Tensor t = Tensor::zeros({4, 3, 2});
  CountHeapAllocations heap;
  Tensor copy = t;
  Tensor step = t.select(1);
  Tensor rows = t.narrow(1, 2);
  Tensor flat = t.view({12, 2});
  Tensor record = t.shape_only();
  Shape grown = t.shape();
  grown.insert(grown.begin(), 5);
  EXPECT_EQ(heap.count(), 0);
  EXPECT_EQ(flat.shape(), (Shape{12, 2}));
  EXPECT_EQ(record.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(grown, (Shape{5, 4, 3, 2}));
  EXPECT_EQ(copy.numel() + step.numel() + rows.numel(), 24 + 6 + 12);
}

}  // namespace
}  // namespace luong
