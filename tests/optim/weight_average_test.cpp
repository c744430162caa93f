// The exponential moving average of the parameters (optim/weight_average.h): its recurrence and warm-up, the
// in-place exchange with the model's buffer (and back, also when the work in between throws), and restoring
// a saved average (a copy that fits the parameters, refused when it does not).
#include "framework/optim/weight_average.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "framework/core/error.h"
#include "tests/support/random_floats.h"

namespace luong::testing {
namespace {

// count values uniform in [lo, hi), the same on every machine.
std::vector<double> random_doubles(int64_t count, uint64_t seed, double lo, double hi) {
  std::vector<double> out;
  for (float x : random_floats(count, seed)) out.push_back(lo + (hi - lo) * (static_cast<double>(x) + 1.0) / 2.0);
  return out;
}

Tensor values(const std::vector<double>& v, DType dtype = DType::f64) {
  return Tensor::from(v, {static_cast<int64_t>(v.size())}, dtype);
}

TEST(ExponentialMovingAverage, WarmsUpThenDecaysAtTheConfiguredRate) {
  const ExponentialMovingAverage ema(0.999);
  EXPECT_DOUBLE_EQ(ema.decay_at(0), 0.1);  // (1 + 0) / (10 + 0)
  EXPECT_DOUBLE_EQ(ema.decay_at(1), 2.0 / 11.0);
  EXPECT_DOUBLE_EQ(ema.decay_at(100), 101.0 / 110.0);
  EXPECT_DOUBLE_EQ(ema.decay_at(9000), 0.999);  // (9001 / 9010 > 0.999)
  EXPECT_DOUBLE_EQ(ExponentialMovingAverage(0.0).decay_at(5), 0.0);
  for (double bad : {-0.1, 1.0, 1.5, std::numeric_limits<double>::quiet_NaN()})
    EXPECT_THROW(ExponentialMovingAverage{bad}, Error) << bad;
}

TEST(ExponentialMovingAverage, FollowsItsRecurrenceInFloat32AndFloat64) {
  for (DType dtype : {DType::f32, DType::f64}) {
    ExponentialMovingAverage ema(0.5);
    EXPECT_FALSE(ema.started());
    std::vector<double> expected;
    for (int k = 0; k < 6; ++k) {
      const std::vector<double> p = random_doubles(257, 10 + static_cast<uint64_t>(k), -2.0, 2.0);
      ema.update(values(p, dtype));
      if (k == 0) {
        expected = p;  // the first update takes the parameters as they are
      } else {
        const double w = 1.0 - ema.decay_at(k);
        for (size_t i = 0; i < p.size(); ++i) expected[i] += w * (p[i] - expected[i]);
      }
      const std::vector<double> got = ema.average().to_vector();
      const double tolerance = dtype == DType::f32 ? 1e-6 : 1e-15;
      for (size_t i = 0; i < p.size(); ++i) ASSERT_NEAR(got[i], expected[i], tolerance) << "update " << k << ", " << i;
    }
    EXPECT_EQ(ema.updates(), 6);
    EXPECT_EQ(ema.average().dtype(), dtype);
  }
}

TEST(ExponentialMovingAverage, AnAverageEqualToTheParametersStaysBitForBitEqual) {
  ExponentialMovingAverage ema(0.9999);
  const Tensor p = values(random_doubles(64, 3, -1e3, 1e3), DType::f32);
  for (int k = 0; k < 5; ++k) ema.update(p);
  EXPECT_EQ(ema.average().to_vector(), p.to_vector());
}

// train.freeze: the trainer averages the trained spans only. The frozen values do not change after the first
// update, so the result is the whole-buffer update's, bit for bit; and a span update leaves the rest alone.
TEST(ExponentialMovingAverage, ASpanUpdateAveragesTheSpansAndGivesTheWholeUpdatesBitsWhenTheRestIsConstant) {
  for (DType dtype : {DType::f32, DType::f64}) {
    const std::vector<FlatSpan> trained{{0, 40}, {100, 57}, {200, 57}};  // 100..157: the gap 157..200 is frozen
    std::vector<double> p = random_doubles(257, 21, -2.0, 2.0);
    const std::vector<double> frozen_before(p.begin() + 40, p.begin() + 100);
    ExponentialMovingAverage whole(0.9), spans(0.9);
    for (int k = 0; k < 5; ++k) {
      for (const FlatSpan& s : trained)
        for (int64_t i = s.offset; i < s.offset + s.numel; ++i) p[static_cast<size_t>(i)] += 0.25 * (k + 1);
      whole.update(values(p, dtype));
      spans.update(values(p, dtype), trained);
    }
    EXPECT_EQ(spans.average().to_vector(), whole.average().to_vector()) << dtype;
    EXPECT_EQ(spans.updates(), 5);

    // A value outside the spans that did change (which the trainer never does) is not averaged.
    std::vector<double> moved = p;
    for (size_t i = 40; i < 100; ++i) moved[i] += 1.0;
    spans.update(values(moved, dtype), trained);
    const std::vector<double> got = spans.average().to_vector();
    for (size_t i = 40; i < 100; ++i) ASSERT_EQ(got[i], values(frozen_before, dtype).to_vector()[i - 40]) << i;
    EXPECT_NE(got[0], whole.average().to_vector()[0]);  // the spans did move
  }
  ExponentialMovingAverage ema(0.9);
  const Tensor p = values(random_doubles(8, 5, -1.0, 1.0));
  const std::vector<FlatSpan> outside{{4, 5}};
  EXPECT_THROW(ema.update(p, outside), Error);
}

TEST(ExponentialMovingAverage, SwapsInAndBackOutAlsoWhenTheWorkThrows) {
  ExponentialMovingAverage ema(0.9);
  Tensor params = values({1, 2, 3});
  {
    AveragedWeights none(&ema, params);  // not started: nothing to swap
    EXPECT_FALSE(none.active());
    EXPECT_EQ(params.to_vector(), (std::vector<double>{1, 2, 3}));
  }
  ema.update(params);
  params.copy_(values({5, 6, 7}));
  ema.update(params);  // the average moves 9/11 of the way: between the two
  const std::vector<double> average = ema.average().to_vector();
  EXPECT_NE(average, params.to_vector());
  try {
    AveragedWeights in(&ema, params);
    EXPECT_TRUE(in.active());
    EXPECT_EQ(params.to_vector(), average);
    EXPECT_EQ(ema.average().to_vector(), (std::vector<double>{5, 6, 7}));
    throw std::runtime_error("a validation that fails");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(params.to_vector(), (std::vector<double>{5, 6, 7}));
  EXPECT_EQ(ema.average().to_vector(), average);
  AveragedWeights off(nullptr, params);  // no average kept
  EXPECT_FALSE(off.active());
}

TEST(ExponentialMovingAverage, RestoresACopyThatFitsTheParametersAndRefusesOneThatDoesNot) {
  const Tensor params = values({0, 0, 0}, DType::f32);
  Tensor saved = values({1, 2, 3});  // stored as float64: moved to the parameters' dtype
  ExponentialMovingAverage ema(0.9);
  ema.restore(saved, 42, params);
  EXPECT_EQ(ema.updates(), 42);
  EXPECT_EQ(ema.average().dtype(), DType::f32);
  saved.copy_(values({9, 9, 9}));
  EXPECT_EQ(ema.average().to_vector(), (std::vector<double>{1, 2, 3}));  // a copy, not the caller's storage
  const Tensor same_dtype = values({4, 5, 6}, DType::f32);
  ema.restore(same_dtype, 1, params);
  EXPECT_NE(ema.average().raw(), same_dtype.raw());

  auto refusal = [&](const Tensor& average, int64_t updates) {
    try {
      ema.restore(average, updates, params);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(refusal(values({1, 2}), 1).find("has 2 values but the model has 3 parameters"), std::string::npos);
  EXPECT_NE(refusal(values({1, std::nan(""), 3}), 1).find("NaN or infinite"), std::string::npos);
  EXPECT_NE(refusal(values({1, 2, 3}), -1).find("negative update count"), std::string::npos);
  EXPECT_EQ(ema.average().to_vector(), (std::vector<double>{4, 5, 6}));  // a refused restore changes nothing
}

}  // namespace
}  // namespace luong::testing
