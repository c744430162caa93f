// The collectives of the process group, the factory, and the parameter checksum and broadcast.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "framework/autograd/flat_parameters.h"
#include "framework/dist/bootstrap.h"
#include "framework/dist/checksum.h"
#include "framework/dist/parameter_sync.h"
#include "framework/dist/token_average.h"
#include "tests/dist/dist_support.h"

namespace luong::testing {
namespace {

TEST(ProcessGroup, RankSizeAndLocalRankAreConsistent) {
  auto pg = make_test_group();
  ASSERT_GE(pg->size(), 1);
  EXPECT_GE(pg->rank(), 0);
  EXPECT_LT(pg->rank(), pg->size());
  EXPECT_GE(pg->local_rank(), 0);
  EXPECT_LT(pg->local_rank(), pg->local_size());
  EXPECT_LE(pg->local_size(), pg->size());
  EXPECT_EQ(pg->backend(), launched_by_mpi() ? "mpi" : "local");
  // Every rank reports a distinct rank.
  const auto ranks = pg->all_gather(static_cast<uint64_t>(pg->rank()));
  ASSERT_EQ(ranks.size(), static_cast<size_t>(pg->size()));
  for (size_t r = 0; r < ranks.size(); ++r) EXPECT_EQ(ranks[r], r);
}

TEST(ProcessGroup, WithoutLauncherMpiIsNeverInitialised) {
  if (launched_by_mpi()) GTEST_SKIP() << "started by mpirun";
  auto pg = make_process_group("auto", Device::cpu());
  EXPECT_EQ(pg->backend(), "local");
  EXPECT_EQ(pg->size(), 1);
  int initialised = 1;
  MPI_Initialized(&initialised);
  EXPECT_EQ(initialised, 0);
}

TEST(ProcessGroup, FactoryRejectsUnknownAndUnavailableBackends) {
  try {
    make_process_group("carrier-pigeon", Device::cpu());
    FAIL() << "no error for an unknown backend";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown process group backend 'carrier-pigeon'"), std::string::npos) << e.what();
  }
  if (!launched_by_mpi()) {
    try {
      make_process_group("mpi", Device::cpu());
      FAIL() << "no error for mpi without a launcher";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("needs a job started by mpirun"), std::string::npos) << e.what();
    }
  }
#ifndef LUONG_WITH_NCCL
  try {
    make_process_group("nccl", Device::cuda(0));
    FAIL() << "no error for nccl in a build without it";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nccl' is not compiled into this build"), std::string::npos) << e.what();
  }
#endif
}

TEST(ProcessGroup, AllReduceSumsFloat32AndFloat64InPlace) {
  auto pg = make_test_group();
  const int n = pg->size(), r = pg->rank();
  for (DType dt : {DType::f32, DType::f64}) {
    // Element i on rank r is (r + 1) * (i - 3): the sum is (i - 3) * n (n + 1) / 2, exact in float32.
    std::vector<double> mine;
    for (int i = 0; i < 37; ++i) mine.push_back((r + 1) * (i - 3.0));
    Tensor t = Tensor::from(mine, {37}, dt);
    Work w = pg->all_reduce_sum(t);
    w.wait();
    EXPECT_TRUE(w.completed());
    const auto got = t.to_vector();
    for (int i = 0; i < 37; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], (i - 3.0) * n * (n + 1) / 2) << dt << " element " << i;
  }
}

TEST(ProcessGroup, AllReduceRejectsIntegerTensorsOnMpi) {
  auto pg = make_test_group();
  if (pg->backend() != "mpi") GTEST_SKIP() << "the local backend has nothing to reduce";
  Tensor ids = Tensor::from_ids({1, 2, 3}, {3});
  try {
    pg->all_reduce_sum(ids);
    FAIL() << "no error for int64";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dtype int64 is not supported"), std::string::npos) << e.what();
  }
}

TEST(ProcessGroup, ScalarsGatherBroadcastAndBarrier) {
  auto pg = make_test_group();
  const int n = pg->size(), r = pg->rank();
  std::vector<double> d{0.5 * (r + 1), -1.0};
  pg->all_reduce_scalars(d);
  EXPECT_DOUBLE_EQ(d[0], 0.25 * n * (n + 1));
  EXPECT_DOUBLE_EQ(d[1], -1.0 * n);
  // Beyond 2^53 a double would round: token counts travel as exact int64.
  std::vector<int64_t> c{(int64_t{1} << 60) / 8 + r, 7};
  pg->all_reduce_scalars(c);
  EXPECT_EQ(c[0], n * ((int64_t{1} << 60) / 8) + n * (n - 1) / 2);
  EXPECT_EQ(c[1], 7 * n);

  const auto g = pg->all_gather(1000u * static_cast<uint64_t>(r) + 7u);
  for (int k = 0; k < n; ++k) EXPECT_EQ(g[static_cast<size_t>(k)], 1000u * static_cast<uint64_t>(k) + 7u);

  const int root = n - 1;
  Tensor t = Tensor::from({1.0 * r, 2.0 * r, 3.0 * r}, {3}, DType::f64);
  pg->broadcast(t, root);
  EXPECT_EQ(t.to_vector(), (std::vector<double>{1.0 * root, 2.0 * root, 3.0 * root}));
  pg->barrier();
  EXPECT_THROW(pg->broadcast(t, n), Error);
}

TEST(Checksum, Fnv1aMatchesTheReferenceValues) {
  // Published FNV-1a 64 test vectors: "" and "a".
  EXPECT_EQ(Fnv1a().value(), 0xcbf29ce484222325ULL);
  Tensor a = Tensor::from({97.0}, {1}, DType::u8);  // the byte 'a'
  EXPECT_EQ(tensor_checksum(a), 0xaf63dc4c8601ec8cULL);
  Tensor foobar = Tensor::from({102, 111, 111, 98, 97, 114}, {6}, DType::u8);
  EXPECT_EQ(tensor_checksum(foobar), 0x85944171f73967e8ULL);
}

TEST(ParameterSync, BroadcastMakesReplicasIdenticalAndChecksumCatchesDrift) {
  auto pg = make_test_group();
  const int r = pg->rank();
  Generator gen(11);
  // Each rank starts from different values; broadcast makes them rank 0's.
  std::vector<double> w = uniform_values(gen, 15, -1, 1), b = uniform_values(gen, 4, -1, 1);
  for (auto& x : w) x += r;
  FlatParameters flat({Variable(Tensor::from(w, {3, 5}, DType::f64), true, "w"),
                       Variable(Tensor::from(b, {4}, DType::f64), true, "b")},
                      Device::cpu());
  broadcast_parameters(flat, *pg);
  EXPECT_DOUBLE_EQ(flat.params()[0].data().to_vector()[0], w[0] - r);
  EXPECT_NO_THROW(check_parameters_identical(flat, *pg));

  // The last rank drifts by one ulp in one element: every rank must report it, naming that rank.
  if (pg->size() == 1) return;
  if (r == pg->size() - 1) {
    double* p = flat.data().data<double>();
    p[17] = std::nextafter(p[17], 2.0);
  }
  try {
    check_parameters_identical(flat, *pg);
    FAIL() << "no error for differing parameters";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("parameters are not identical across ranks: rank(s) " + std::to_string(pg->size() - 1)),
              std::string::npos) << msg;
  }
}

TEST(TokenAverage, TotalsAndScaling) {
  auto pg = make_test_group();
  const int n = pg->size(), r = pg->rank();
  const StepTotals t = all_reduce_step_totals(*pg, 1.5 * (r + 1), 10 + r);
  EXPECT_DOUBLE_EQ(t.loss_sum, 0.75 * n * (n + 1));
  EXPECT_EQ(t.tokens, 10 * n + n * (n - 1) / 2);

  FlatParameters flat({Variable(Tensor::from({1.0, 2.0, 3.0}, {3}, DType::f64), true, "p")}, Device::cpu());
  flat.grad().copy_(Tensor::from({8.0, -4.0, 2.0}, {3}, DType::f64));
  scale_gradients_by_tokens(flat, 4);
  EXPECT_EQ(flat.grad().to_vector(), (std::vector<double>{2.0, -1.0, 0.5}));
  try {
    scale_gradients_by_tokens(flat, 0);
    FAIL() << "no error for zero tokens";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("global token count is 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace luong::testing
