// The bucketed Reducer: bucket layout, exact sums over ranks in float32 and float64 with many odd-sized
// buckets, parameters without a gradient, gradient accumulation, and overlap with backward.
#include <gtest/gtest.h>

#include <algorithm>

#include "framework/autograd/flat_parameters.h"
#include "framework/dist/reducer.h"
#include "framework/ops/ops.h"
#include "tests/dist/dist_support.h"

namespace luong::testing {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TEST(BucketPlan, ReverseOrderContiguousAndCapped) {
  const std::vector<int64_t> numels{7, 13, 1, 29, 5, 101, 3, 64};
  ReducerOptions opt;
  opt.first_bucket_mb = 40.0 / kMiB;  // 10 float32s
  opt.bucket_mb = 120.0 / kMiB;       // 30 float32s
  const auto buckets = plan_buckets(numels, 4, opt);
  // Walking from the last parameter: [64] (alone over the first cap) | [3] (3 + 101 > 30) | [101] (alone
  // over the cap) | [5] (5 + 29 > 30) | [29, 1] (exactly 30) | [13, 7].
  std::vector<std::vector<size_t>> want{{7}, {6}, {5}, {4}, {3, 2}, {1, 0}};
  ASSERT_EQ(buckets.size(), want.size());
  int64_t end = 7 + 13 + 1 + 29 + 5 + 101 + 3 + 64;
  for (size_t b = 0; b < buckets.size(); ++b) {
    EXPECT_EQ(buckets[b].params, want[b]) << "bucket " << b;
    EXPECT_EQ(buckets[b].offset + buckets[b].numel, end) << "bucket " << b << " is not adjacent to the previous";
    end = buckets[b].offset;
  }
  EXPECT_EQ(end, 0);
  EXPECT_THROW(plan_buckets(numels, 4, ReducerOptions{0.0, 1.0}), Error);
}

// Parameters of odd sizes; loss = sum_i sum(p_i * c_i) so that grad p_i = c_i exactly, with c depending
// on the rank. Parameter `unused_on_even` takes part only on odd ranks.
struct OddModel {
  std::vector<Variable> params;
  std::vector<std::vector<double>> coeff_of_rank(int rank) const {
    std::vector<std::vector<double>> c;
    for (size_t i = 0; i < params.size(); ++i) {
      std::vector<double> v;
      for (int64_t j = 0; j < params[i].data().numel(); ++j)
        v.push_back((rank + 1) * static_cast<double>((j * 7 + static_cast<int64_t>(i)) % 11 - 5) + 0.25);
      c.push_back(v);
    }
    return c;
  }
};

constexpr size_t kUnusedOnEven = 3;

Variable odd_loss(const OddModel& m, int rank, DType dt) {
  const auto c = m.coeff_of_rank(rank);
  Variable loss;
  for (size_t i = 0; i < m.params.size(); ++i) {
    if (i == kUnusedOnEven && rank % 2 == 0) continue;
    Variable term = sum(mul(m.params[i], Variable(Tensor::from(c[i], m.params[i].shape(), dt))));
    loss = loss.defined() ? add(loss, term) : term;
  }
  return loss;
}

class ReducerDtype : public ::testing::TestWithParam<DType> {};

TEST_P(ReducerDtype, OddBucketsSumExactlyOverRanksAndLayoutIsIdentical) {
  const DType dt = GetParam();
  auto pg = make_test_group();
  const int n = pg->size(), r = pg->rank();
  const std::vector<Shape> shapes{{7}, {13}, {1}, {29}, {5, 3}, {101}, {3}, {2, 9, 3}};
  OddModel m;
  for (size_t i = 0; i < shapes.size(); ++i)
    m.params.emplace_back(Tensor::full(shapes[i], 0.5, dt), true, "p" + std::to_string(i));
  FlatParameters flat(m.params, Device::cpu());
  ReducerOptions opt;
  opt.first_bucket_mb = opt.bucket_mb = 100.0 / kMiB;  // 100 bytes: many buckets
  Reducer reducer(flat, *pg, opt);
  ASSERT_GE(reducer.buckets().size(), 6u);
  // Identical layout on every rank (the constructor checks this too; here it is observed directly).
  for (uint64_t h : pg->all_gather(reducer.layout_hash())) EXPECT_EQ(h, reducer.layout_hash());

  for (int pass = 0; pass < 2; ++pass) {  // the second pass checks the per-pass state was reset
    flat.zero_grad();
    odd_loss(m, r, dt).backward();
    reducer.finish();
    for (size_t i = 0; i < m.params.size(); ++i) {
      std::vector<double> want(static_cast<size_t>(m.params[i].data().numel()), 0.0);
      for (int k = 0; k < n; ++k) {
        if (i == kUnusedOnEven && k % 2 == 0) continue;
        const auto c = m.coeff_of_rank(k)[i];
        for (size_t j = 0; j < want.size(); ++j) want[j] += c[j];
      }
      EXPECT_EQ(m.params[i].grad().to_vector(), want) << "parameter " << i << " pass " << pass;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ReducerDtype, ::testing::Values(DType::f32, DType::f64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(Reducer, AccumulationWithSyncDisabledThenOneReduction) {
  auto pg = make_test_group();
  const int n = pg->size(), r = pg->rank();
  Variable p(Tensor::zeros({5}, DType::f64), true, "p");
  FlatParameters flat({p}, Device::cpu());
  Reducer reducer(flat, *pg);
  const Variable c(Tensor::from({1, 2, 3, 4, 5}, {5}, DType::f64));
  flat.zero_grad();
  reducer.set_sync_enabled(false);
  for (int k = 0; k < 2; ++k) sum(mul_scalar(mul(p, c), r + 1.0)).backward();
  EXPECT_EQ(p.grad().to_vector()[4], 10.0 * (r + 1));  // accumulated locally, not reduced
  EXPECT_THROW(reducer.finish(), Error);
  reducer.set_sync_enabled(true);
  sum(mul_scalar(mul(p, c), r + 1.0)).backward();
  reducer.finish();
  // 3 passes of (r + 1) * c summed over ranks.
  EXPECT_EQ(p.grad().to_vector(), (std::vector<double>{1.5 * n * (n + 1), 3.0 * n * (n + 1), 4.5 * n * (n + 1),
                                                       6.0 * n * (n + 1), 7.5 * n * (n + 1)}));
}

TEST(Reducer, SecondBackwardWithoutFinishIsAnErrorNamingTheParameter) {
  auto pg = make_test_group();
  Variable p(Tensor::zeros({4}, DType::f64), true, "decoder.w");
  FlatParameters flat({p}, Device::cpu());
  Reducer reducer(flat, *pg);
  sum(p).backward();
  try {
    sum(p).backward();
    FAIL() << "no error for a second pass without finish()";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 0 ('decoder.w') became ready twice"), std::string::npos) << e.what();
  }
}

// `layers` square float64 weights w0, w1, ... of width x width, uniform in [-0.2, 0.2]: a deep chain's layers.
std::vector<Variable> square_weights(Generator& gen, int layers, int width) {
  std::vector<Variable> ws;
  for (int l = 0; l < layers; ++l)
    ws.emplace_back(Tensor::from(uniform_values(gen, width * width, -0.2, 0.2), {width, width}, DType::f64), true,
                    "w" + std::to_string(l));
  return ws;
}

// Bucket caps that hold exactly one such weight per bucket.
ReducerOptions one_weight_per_bucket(int width) {
  ReducerOptions opt;
  opt.first_bucket_mb = opt.bucket_mb = width * width * 8 / kMiB;
  return opt;
}

// A deep chain: x -> tanh(x W_1) -> ... -> tanh(. W_L) -> weighted sum. Backward reaches W_L first and W_1
// last; with one bucket per weight, every bucket but the last must be launched before the last hook.
TEST(Reducer, CommunicationStartsBeforeBackwardEnds) {
  auto pg = make_test_group();
  constexpr int kLayers = 6, kWidth = 32;
  Generator gen(5);
  std::vector<Variable> ws = square_weights(gen, kLayers, kWidth);
  FlatParameters flat(ws, Device::cpu());
  Reducer reducer(flat, *pg, one_weight_per_bucket(kWidth));
  ASSERT_EQ(reducer.buckets().size(), static_cast<size_t>(kLayers));

  Variable h(Tensor::from(uniform_values(gen, 16 * kWidth, -1, 1), {16, kWidth}, DType::f64));
  for (const auto& w : ws) h = tanh(matmul(h, w));
  flat.zero_grad();
  sum(mul(h, Variable(Tensor::from(uniform_values(gen, 16 * kWidth, -1, 1), {16, kWidth}, DType::f64)))).backward();
  reducer.finish();

  // Positions in the timeline (it is in event order), so the test does not depend on clock resolution.
  using Kind = ReducerEvent::Kind;
  const auto& tl = reducer.timeline();
  std::vector<size_t> hook_pos(kLayers), launch_pos(kLayers);
  size_t last_hook = 0;
  for (size_t k = 0; k < tl.size(); ++k) {
    if (tl[k].kind == Kind::hook) hook_pos[tl[k].index] = k, last_hook = k;
    if (tl[k].kind == Kind::launch) launch_pos[tl[k].index] = k;
  }
  EXPECT_EQ(std::count_if(tl.begin(), tl.end(), [](const auto& e) { return e.kind == Kind::complete; }), kLayers);
  // Hooks in reverse layer order; the last one is the first layer's weight, which is the last bucket.
  EXPECT_EQ(tl[last_hook].index, 0u);
  EXPECT_LT(launch_pos[0], last_hook) << "bucket 0 (last layer) was not launched before backward ended";
  EXPECT_LT(tl[launch_pos[0]].time, tl[last_hook].time);
  // Every bucket but the last was launched during backward; the last one right on its hook.
  for (size_t b = 0; b + 1 < kLayers; ++b) EXPECT_LT(launch_pos[b], last_hook) << "bucket " << b;
  EXPECT_EQ(launch_pos[kLayers - 1], last_hook + 1);
  // No bucket is launched before its parameter is ready.
  for (size_t b = 0; b < reducer.buckets().size(); ++b)
    EXPECT_GT(launch_pos[b], hook_pos[reducer.buckets()[b].params[0]]) << "bucket " << b;
}

// train.freeze turns a parameter's gradient off before the reducer is made: its hook never fires, and waiting
// for it would hold its bucket and, buckets being launched in order, every later one until finish(). Frozen
// W_2 of six layers, a bucket of its own: every other bucket goes out during backward, the frozen one never.
TEST(Reducer, AFrozenParameterHoldsNoBucketBackAndItsBucketIsNeverLaunched) {
  auto pg = make_test_group();
  constexpr int kLayers = 6, kWidth = 16, kFrozen = 2;
  Generator gen(7);
  std::vector<Variable> ws = square_weights(gen, kLayers, kWidth);
  FlatParameters flat(ws, Device::cpu());
  ws[kFrozen].set_requires_grad(false);
  Reducer reducer(flat, *pg, one_weight_per_bucket(kWidth));  // made after the freezing, as the trainer makes it
  const size_t frozen_bucket = kLayers - 1 - kFrozen;         // bucket b holds layer kLayers - 1 - b
  EXPECT_EQ(reducer.buckets()[frozen_bucket].reduced.numel, 0);
  EXPECT_EQ(reducer.reduced_numel(), flat.numel() - kWidth * kWidth);

  Variable h(Tensor::from(uniform_values(gen, 8 * kWidth, -1, 1), {8, kWidth}, DType::f64));
  for (const auto& w : ws) h = tanh(matmul(h, w));
  flat.zero_grad();
  sum(h).backward();
  using Kind = ReducerEvent::Kind;
  auto launches = [&] {
    std::vector<size_t> b;
    for (const auto& e : reducer.timeline())
      if (e.kind == Kind::launch) b.push_back(e.index);
    return b;
  };
  const std::vector<size_t> during_backward = launches();
  reducer.finish();
  // The last hook (W_0's) launches the last bucket, all the others went before; none launches the frozen one.
  EXPECT_EQ(during_backward, (std::vector<size_t>{0, 1, 2, 4, 5}));
  EXPECT_EQ(launches(), during_backward);
  const std::vector<double> g = flat.grad().to_vector();
  for (int64_t k = 0; k < kWidth * kWidth; ++k) ASSERT_EQ(g[static_cast<size_t>(flat.offset(kFrozen) + k)], 0.0);
  EXPECT_NE(g[static_cast<size_t>(flat.offset(kFrozen + 1))], 0.0);
}

// One bucket of four weights, W_1 and W_3 frozen: the all-reduce carries W_0..W_2 (W_1's zeros included, it lies
// between trained ones) and not W_3, whose slot here holds a value of this rank's own: summed over two ranks,
// it would change.
TEST(Reducer, ABucketCarriesTheRangeOfItsTrainedParametersOnly) {
  auto pg = make_test_group();
  const int n = pg->size(), r = pg->rank();
  constexpr int kWidth = 8;
  constexpr int64_t kSize = kWidth * kWidth;
  Generator gen(11);
  std::vector<Variable> ws = square_weights(gen, 4, kWidth);
  FlatParameters flat(ws, Device::cpu());
  ws[1].set_requires_grad(false);
  ws[3].set_requires_grad(false);
  Reducer reducer(flat, *pg);  // the default caps: one bucket
  ASSERT_EQ(reducer.buckets().size(), 1u);
  EXPECT_EQ(reducer.buckets()[0].reduced, (FlatSpan{0, 3 * kSize}));
  EXPECT_EQ(reducer.reduced_numel(), 3 * kSize);

  flat.zero_grad();
  flat.grad_span({flat.offset(3), kSize}).fill_(7.0 * (r + 1));
  Variable loss = sum(mul_scalar(ws[0], r + 1.0));
  for (size_t i = 1; i < ws.size(); ++i) loss = add(loss, sum(mul_scalar(ws[i], r + 1.0)));
  loss.backward();
  reducer.finish();
  const std::vector<double> g = flat.grad().to_vector();
  const double summed = n * (n + 1) / 2.0;  // sum over ranks of r + 1
  for (int64_t k = 0; k < kSize; ++k) {
    ASSERT_EQ(g[static_cast<size_t>(flat.offset(0) + k)], summed);
    ASSERT_EQ(g[static_cast<size_t>(flat.offset(1) + k)], 0.0);
    ASSERT_EQ(g[static_cast<size_t>(flat.offset(2) + k)], summed);
    ASSERT_EQ(g[static_cast<size_t>(flat.offset(3) + k)], 7.0 * (r + 1)) << "the frozen W_3 was communicated";
  }
}

// The ranks agreed on which gradients to communicate when the reducer was made: freezing afterwards would
// make this rank skip collectives the others issue, so the next pass refuses it, naming the parameter.
TEST(Reducer, FreezingAfterTheReducerIsMadeIsAnErrorNamingTheParameter) {
  auto pg = make_test_group();
  Generator gen(13);
  std::vector<Variable> ws = square_weights(gen, 3, 4);
  FlatParameters flat(ws, Device::cpu());
  Reducer reducer(flat, *pg);
  ws[1].set_requires_grad(false);
  flat.zero_grad();
  try {
    sum(add(sum(ws[0]), sum(ws[2]))).backward();
    FAIL() << "no error for a parameter frozen after the reducer was made";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 1 ('w1') was frozen after the Reducer was made"), std::string::npos)
        << e.what();
  }
}

// Ranks that freeze different parameters would issue different collectives: the reducer's construction,
// where the ranks compare their layouts, refuses it on every rank.
TEST(Reducer, RanksFreezingDifferentParametersAreRefusedWhenItIsMade) {
  auto pg = make_test_group();
  if (pg->size() < 2) GTEST_SKIP() << "needs two ranks (mpirun -np 2)";
  Generator gen(17);
  std::vector<Variable> ws = square_weights(gen, 3, 4);
  FlatParameters flat(ws, Device::cpu());
  if (pg->rank() == 1) ws[0].set_requires_grad(false);
  try {
    Reducer reducer(flat, *pg);
    FAIL() << "no error for different frozen parameters on the ranks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the frozen parameters differ"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace luong::testing
