// Tensor storage, views, copies and error messages.
#include <gtest/gtest.h>

#include "framework/core/philox.h"
#include "framework/tensor/tensor.h"

namespace luong {
namespace {

TEST(Tensor, SelectIsAViewSharingStorage) {
  Tensor t = Tensor::from({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 2, 2});  // (T, B, H)
  Tensor step = t.select(1);
  EXPECT_EQ(step.shape(), (Shape{2, 2}));
  EXPECT_TRUE(step.shares_storage(t));
  EXPECT_EQ(step.to_vector(), (std::vector<double>{4, 5, 6, 7}));
  step.data<float>()[0] = 42;  // writes through to the parent
  EXPECT_EQ(t.to_vector()[4], 42);
}

TEST(Tensor, NarrowAndViewShareStorage) {
  Tensor t = Tensor::from({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor n = t.narrow(1, 2);
  EXPECT_EQ(n.to_vector(), (std::vector<double>{2, 3, 4, 5}));
  Tensor v = n.view({-1});
  EXPECT_EQ(v.shape(), (Shape{4}));
  EXPECT_TRUE(v.shares_storage(t));
}

TEST(Tensor, CloneIsIndependent) {
  Tensor t = Tensor::from({1, 2}, {2}, DType::f64);
  Tensor c = t.clone();
  c.data<double>()[0] = 9;
  EXPECT_EQ(t.to_vector()[0], 1);
}

TEST(Tensor, DtypeConversionRoundsBf16ToNearestEven) {
  Tensor t = Tensor::from({1.0, 1.00390625, -2.5}, {3}, DType::f32);
  Tensor b = t.to(DType::bf16);
  EXPECT_EQ(b.dtype(), DType::bf16);
  auto back = b.to_vector();
  EXPECT_EQ(back[0], 1.0);
  EXPECT_EQ(back[1], 1.0);  // halfway between 1 and 1.0078125: ties to even
  EXPECT_EQ(back[2], -2.5);
}

TEST(Tensor, ErrorsNameShapesAndIndices) {
  Tensor t = Tensor::zeros({2, 3});
  try {
    t.select(5);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("select index 5 out of range for shape (2, 3)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t.view({4, 2}), Error);
  EXPECT_THROW(t.data<double>(), Error);
  EXPECT_THROW(Tensor().raw(), Error);
}

TEST(Tensor, CudaWithoutBackendIsAClearError) {
#ifndef LUONG_WITH_CUDA
  try {
    Tensor::zeros({2}, DType::f32, Device::cuda(0));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA backend"), std::string::npos) << e.what();
  }
#else
  GTEST_SKIP() << "CUDA build";
#endif
}

TEST(Device, Parses) {
  EXPECT_TRUE(Device::parse("cpu").is_cpu());
  EXPECT_EQ(Device::parse("cuda:3").index, 3);
  EXPECT_THROW(Device::parse("gpu"), Error);
  EXPECT_THROW(Device::parse("cuda:x"), Error);
}

TEST(Philox, KnownAnswerAndCounterBased) {
  // Known-answer vector from Random123 (kat_vectors): philox4x32_10, counter = 0, key = 0.
  Philox4x32 r = philox4x32_10(0, 0, 0);
  EXPECT_EQ(r.v[0], 0x6627e8d5u);
  EXPECT_EQ(r.v[1], 0xe169c58du);
  EXPECT_EQ(r.v[2], 0xbc57ac4cu);
  EXPECT_EQ(r.v[3], 0x9b00dbd8u);
  // Element i of a draw depends only on (seed, offset, i).
  Generator a(7), b(7);
  a.reserve(10);
  b.reserve(3);
  b.reserve(7);  // 3 + 7 values take ceil(3/4) + ceil(7/4) = 3 blocks; 10 values take 3 blocks too
  EXPECT_EQ(a.offset(), b.offset());
  EXPECT_EQ(a.uniform(), b.uniform());
}

TEST(Philox, UniformIsRoughlyUniform) {
  Generator g(3);
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const float u = g.uniform();
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
}

}  // namespace
}  // namespace luong

namespace luong {
namespace {

TEST(CpuAllocator, ReusesFreedBlocksAndTracksPeak) {
  Allocator& a = allocator_for(Device::cpu());
  { Tensor warm = Tensor::empty({1000, 1000}); }  // leaves a 4 MB block cached
  const MemoryStats before = a.stats();
  { Tensor t = Tensor::empty({1000, 1000}); }
  const MemoryStats after = a.stats();
  EXPECT_EQ(after.num_allocs, before.num_allocs) << "a freed block of the same size class must be reused";
  EXPECT_EQ(after.allocated, before.allocated);
  EXPECT_GE(after.peak, before.allocated + 4000000);
}

TEST(CpuAllocator, EmptyCacheReturnsEveryCachedBlockAndLiveOnesStay) {
  Allocator& a = allocator_for(Device::cpu());
  Tensor live = Tensor::full({1000}, 3.0);
  { Tensor freed = Tensor::empty({1000, 1000}); }
  ASSERT_GE(a.stats().cached, 4000000);
  const int64_t allocated = a.stats().allocated;
  a.empty_cache();
  EXPECT_EQ(a.stats().cached, 0);
  EXPECT_EQ(a.stats().allocated, allocated);
  EXPECT_EQ(live.to_vector()[999], 3.0);
  const int64_t allocs = a.stats().num_allocs;
  { Tensor again = Tensor::empty({1000, 1000}); }
  EXPECT_EQ(a.stats().num_allocs, allocs + 1) << "the emptied block must come from the system again";
}

}  // namespace
}  // namespace luong
