// Validation split over the ranks of a job (NmtTask::validate): each rank computes every world-th batch,
// the per-batch sums are all-reduced and added in batch order, which must give bit for bit what one
// process computing every batch gives. Run as one process and under mpirun -np 2 (dist_support.h).
#include <gtest/gtest.h>

#include "framework/core/philox.h"
#include "models/nmt/model.h"
#include "models/nmt/nmt_task.h"
#include "tests/dist/dist_support.h"
#include "tests/support/random_pairs.h"

namespace luong::testing {
namespace {

// 23 pairs of varied lengths (ids 4..15; 0-3 are the specials): batches of 4 leave a short last one.
nmt::Corpus varied_corpus() {
  Generator g(17);
  return random_pairs(g, 23, {12, 1, 9}, {12, 1, 9});
}

TEST(ShardedValidation, EqualsOneProcessBitForBit) {
  auto group = make_test_group();
  nmt::ModelConfig mc;
  mc.src_vocab = mc.tgt_vocab = 16;
  mc.layers = 2, mc.hidden_size = 12, mc.embedding_size = 8, mc.dropout = 0.0;
  Generator init(5);  // the same parameters on every rank
  nmt::NmtModel model(mc, init);
  model.eval();
  const nmt::Corpus corpus = varied_corpus();
  const int64_t batch = 4, batches = 6;

  std::vector<double> mine =
      nmt::evaluate_batch_losses(model, corpus, batch, Device::cpu(), group->rank(), group->size());
  ASSERT_EQ(mine.size(), static_cast<size_t>(2 * batches));
  for (int64_t k = 0; k < batches; ++k) {  // this rank computed its own batches only
    const bool own = k % group->size() == group->rank();
    EXPECT_EQ(mine[static_cast<size_t>(2 * k + 1)] > 0, own) << "batch " << k;
  }
  group->all_reduce_scalars(mine);
  const ValidationResult sharded = nmt::sum_batch_losses(mine);
  const ValidationResult whole = nmt::evaluate_loss(model, corpus, batch, Device::cpu());
  EXPECT_EQ(sharded.tokens, whole.tokens);
  EXPECT_EQ(sharded.loss_sum, whole.loss_sum);  // bitwise: each batch's sum, added in the same order
  int64_t tokens = 0;
  for (const auto& e : corpus.examples) tokens += static_cast<int64_t>(e.tgt.size()) + 1;  // + </s>
  EXPECT_EQ(whole.tokens, tokens);
  EXPECT_GT(whole.loss_sum, 0.0);
}

// A stop poll that says true before batch k ends this rank's pass there: the flag is set and its later batches
// stay zero (NmtTask::validate then reports the validation abandoned).
TEST(ShardedValidation, AStopPollEndsThePassBetweenBatches) {
  auto group = make_test_group();
  nmt::ModelConfig mc;
  mc.src_vocab = mc.tgt_vocab = 16;
  mc.layers = 1, mc.hidden_size = 8, mc.embedding_size = 8, mc.dropout = 0.0;
  Generator init(5);
  nmt::NmtModel model(mc, init);
  model.eval();
  const nmt::Corpus corpus = varied_corpus();
  int polls = 0;
  bool stopped = false;
  const std::vector<double> part = nmt::evaluate_batch_losses(
      model, corpus, 4, Device::cpu(), 0, 1, [&] { return ++polls == 3; }, &stopped);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(polls, 3);
  for (size_t k = 0; k < 6; ++k) EXPECT_EQ(part[2 * k + 1] > 0, k < 2) << "batch " << k;
  bool never = false;
  const std::vector<double> whole = nmt::evaluate_batch_losses(
      model, corpus, 4, Device::cpu(), 0, 1, [] { return false; }, &never);
  EXPECT_FALSE(never);
  EXPECT_EQ(whole, nmt::evaluate_batch_losses(model, corpus, 4, Device::cpu(), 0, 1));
}

}  // namespace
}  // namespace luong::testing
