// Checkpointing optimizer state: a run stopped, saved and resumed into a fresh optimizer must continue
// bit for bit like one that never stopped. Covers every registered optimizer.
#include <gtest/gtest.h>

#include <cstring>

#include "framework/core/philox.h"
#include "framework/kernels/cpu/parallel.h"
#include "tests/optim/optim_support.h"
#include "tests/support/threads_guard.h"

namespace luong::testing {
namespace {

OptimizerOptions busy_options() {
  OptimizerOptions o;
  o.momentum = 0.9;  // so sgd keeps state too
  o.weight_decay = 0.01;
  return o;
}

std::vector<double> random_values(int64_t n, uint64_t seed) {
  Generator g(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = 2.0 * g.uniform() - 1.0;
  return v;
}

// Steps t in [first, last] with a gradient and lr that depend only on t.
void run_steps(Optimizer& opt, FlatParameters& fp, int first, int last) {
  for (int t = first; t <= last; ++t) {
    set_grad(fp, random_values(fp.numel(), 100 + static_cast<uint64_t>(t)));
    opt.step(fp, 0.05 / t);
  }
}

void expect_bitwise_equal(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
}

class OptimizerState : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerState, ResumeContinuesBitwise) {
  const std::vector<double> p0 = random_values(37, 7);
  FlatParameters straight = flat_params(p0, DType::f32);
  auto a = make_optimizer(GetParam(), busy_options());
  run_steps(*a, straight, 1, 5);

  FlatParameters resumed = flat_params(p0, DType::f32);
  StateDict saved;
  {
    auto first = make_optimizer(GetParam(), busy_options());
    run_steps(*first, resumed, 1, 2);
    first->state(saved);
  }
  auto b = make_optimizer(GetParam(), busy_options());
  b->load_state(saved);
  EXPECT_EQ(b->steps(), 2);
  run_steps(*b, resumed, 3, 5);

  expect_bitwise_equal(straight.data(), resumed.data());
  StateDict sa, sb;
  a->state(sa);
  b->state(sb);
  EXPECT_EQ(sa.ints, sb.ints);
  ASSERT_FALSE(sa.tensors.empty());
  for (const auto& [k, t] : sa.tensors) {
    EXPECT_EQ(t.dtype(), DType::f32) << k;
    expect_bitwise_equal(t, sb.tensors.at(k));
  }
}

TEST_P(OptimizerState, SameBitsForAnyThreadCount) {
  // Above the parallel grain so the OpenMP path runs.
  const std::vector<double> p0 = random_values(cpu::kParallelGrain * 2 + 11, 3);
  std::vector<Tensor> results;
  const luong::testing::ThreadsGuard threads_guard;
  for (int threads : {1, 2}) {
    cpu::set_num_threads(threads);
    FlatParameters fp = flat_params(p0, DType::f32);
    auto opt = make_optimizer(GetParam(), busy_options());
    run_steps(*opt, fp, 1, 2);
    results.push_back(fp.data().clone());
  }
  expect_bitwise_equal(results[0], results[1]);
}

TEST_P(OptimizerState, StateIsASnapshot) {
  FlatParameters fp = flat_params(random_values(5, 1), DType::f32);
  auto opt = make_optimizer(GetParam(), busy_options());
  run_steps(*opt, fp, 1, 1);
  StateDict sd;
  opt->state(sd);
  std::vector<std::vector<double>> before;
  for (const auto& [k, t] : sd.tensors) before.push_back(t.to_vector());
  run_steps(*opt, fp, 2, 3);
  size_t i = 0;
  for (const auto& [k, t] : sd.tensors) EXPECT_EQ(t.to_vector(), before[i++]) << k;
}

// The trainer's checkpoint view: the same entries as the snapshot, sharing storage with the live buffers.
TEST_P(OptimizerState, StateViewEqualsTheSnapshotAndSharesTheLiveBuffers) {
  FlatParameters fp = flat_params(random_values(5, 1), DType::f32);
  auto opt = make_optimizer(GetParam(), busy_options());
  run_steps(*opt, fp, 1, 1);
  StateDict snapshot, view;
  opt->state(snapshot);
  opt->state_view(view);
  ASSERT_EQ(view.tensors.size(), snapshot.tensors.size());
  ASSERT_FALSE(view.tensors.empty()) << "busy options keep state buffers";
  EXPECT_EQ(view.ints, snapshot.ints);
  EXPECT_EQ(view.strings, snapshot.strings);
  for (const auto& [k, t] : view.tensors) {
    EXPECT_EQ(t.to_vector(), snapshot.tensors.at(k).to_vector()) << k;
    EXPECT_FALSE(t.shares_storage(snapshot.tensors.at(k))) << k;
  }
  run_steps(*opt, fp, 2, 3);
  StateDict later;
  opt->state(later);
  for (const auto& [k, t] : view.tensors) EXPECT_EQ(t.to_vector(), later.tensors.at(k).to_vector()) << k;
}

TEST_P(OptimizerState, LoadRejectsMismatchedState) {
  FlatParameters fp = flat_params(random_values(5, 1), DType::f32);
  auto opt = make_optimizer(GetParam(), busy_options());
  run_steps(*opt, fp, 1, 1);
  StateDict sd;
  opt->state(sd);

  auto error_of = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Wrong optimizer name.
  StateDict renamed = sd;
  renamed.strings["name"] = "other";
  EXPECT_NE(error_of([&] { make_optimizer(GetParam(), busy_options())->load_state(renamed); }).find("'other'"),
            std::string::npos);
  // Missing buffer: the message names the key.
  StateDict missing = sd;
  const std::string key = missing.tensors.begin()->first;
  missing.tensors.erase(key);
  EXPECT_NE(error_of([&] { make_optimizer(GetParam(), busy_options())->load_state(missing); }).find("'" + key + "'"),
            std::string::npos);
  // Buffers for a different number of parameters fail on the next step, naming the buffer and both sizes.
  auto fresh = make_optimizer(GetParam(), busy_options());
  fresh->load_state(sd);
  FlatParameters bigger = flat_params(random_values(6, 1), DType::f32);
  const std::string msg = error_of([&] { fresh->step(bigger, 0.1); });
  EXPECT_NE(msg.find("5 elements"), std::string::npos) << msg;
  EXPECT_NE(msg.find("6"), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(Registered, OptimizerState, ::testing::ValuesIn(OptimizerRegistry::instance().names()));

TEST(OptimizerRegistry, ListsSgdAndAdamAndNamesThemOnError) {
  const auto names = OptimizerRegistry::instance().names();
  EXPECT_NE(std::find(names.begin(), names.end(), "sgd"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "adam"), names.end());
  try {
    make_optimizer("adagrad");
    FAIL() << "no error for an unknown optimizer";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown optimizer 'adagrad'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("adam, sgd"), std::string::npos) << msg;
  }
  for (const auto& n : names) EXPECT_EQ(make_optimizer(n)->name(), n);
}

}  // namespace
}  // namespace luong::testing
