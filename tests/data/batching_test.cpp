// Batch padding, length bucketing by sentences and by tokens, deterministic shuffles, sharding.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "models/nmt/data/batch.h"
#include "models/nmt/data/batching.h"
#include "tests/data/batching_test_util.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using Ids = std::vector<int64_t>;

std::vector<int64_t> flatten(const EpochPlan& p) {
  std::vector<int64_t> all;
  for (const auto& b : p.batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

void expect_permutation_of_corpus(const EpochPlan& p, int64_t n) {
  std::vector<int64_t> all = flatten(p);
  std::sort(all.begin(), all.end());
  ASSERT_EQ(static_cast<int64_t>(all.size()), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(all[static_cast<size_t>(i)], i);
}

TEST(MakeBatch, PadsSourceAndTeacherForcedTargets) {
  Corpus c;
  c.examples = {{{5, 6, 7}, {8, 9}, 1}, {{10}, {11, 12, 13}, 2}};
  const Batch b = make_batch(c, {1, 0});
  EXPECT_EQ(b.src.shape(), (Shape{2, 3}));
  EXPECT_EQ(b.src.dtype(), DType::i64);
  EXPECT_EQ(b.src.to_vector(), (std::vector<double>{10, 0, 0, 5, 6, 7}));
  EXPECT_EQ(b.src_lengths.to_vector(), (std::vector<double>{1, 3}));
  EXPECT_EQ(b.tgt_in.shape(), (Shape{2, 4}));
  EXPECT_EQ(b.tgt_in.to_vector(), (std::vector<double>{2, 11, 12, 13, 2, 8, 9, 0}));
  EXPECT_EQ(b.tgt_out.to_vector(), (std::vector<double>{11, 12, 13, 3, 8, 9, 3, 0}));
  EXPECT_EQ(b.tgt_lengths.to_vector(), (std::vector<double>{4, 3}));
  EXPECT_EQ(b.sentences, 2);
  EXPECT_EQ(b.src_tokens, 4);
  EXPECT_EQ(b.tgt_tokens, 7);
  EXPECT_EQ(b.indices, (Ids{1, 0}));
  EXPECT_ERROR_HAS(make_batch(c, {2}), "example 2 out of range");
}

TEST(PlanEpoch, BySentencesCoversEveryExampleOnceInFullBatches) {
  auto c = testing::varied_corpus(1000);
  BatchingOptions o{.batch_size = 32, .by = BatchBy::sentences, .pool_batches = 5, .seed = 3};
  const EpochPlan p = plan_epoch(*c, o, 0);
  expect_permutation_of_corpus(p, 1000);
  int64_t partial = 0;
  for (const auto& b : p.batches) {
    EXPECT_LE(b.size(), 32u);
    partial += b.size() < 32;
  }
  // 1000 = 6 pools of 160 + one of 40: only the last batch of the last pool is short (40 = 32 + 8).
  EXPECT_EQ(partial, 1);
  EXPECT_EQ(p.batches.size(), 32u);
}

TEST(PlanEpoch, BatchesAreLengthSortedAndLengthsAreBucketed) {
  auto c = testing::varied_corpus(2000);
  BatchingOptions o{.batch_size = 20, .pool_batches = 10, .sort_key = SortKey::source, .seed = 1};
  const EpochPlan p = plan_epoch(*c, o, 0);
  double spread_sum = 0;
  for (const auto& b : p.batches) {
    for (size_t i = 1; i < b.size(); ++i)
      EXPECT_LE(c->examples[b[i - 1]].src.size(), c->examples[b[i]].src.size());
    spread_sum += static_cast<double>(c->examples[b.back()].src.size() - c->examples[b.front()].src.size());
  }
  // Sorting a pool of 200 lengths in [1, 30] leaves batches of 20 spanning ~3 lengths, far below an
  // unsorted batch's ~27; a plan without bucketing fails this.
  EXPECT_LT(spread_sum / static_cast<double>(p.batches.size()), 6.0);
}

TEST(PlanEpoch, TheLongerSideOrderPadsBothSidesWhereTheSourceOrderPadsTheTarget) {
  EXPECT_EQ(BatchingOptions{}.sort_key, SortKey::longer_side);
  auto c = testing::varied_corpus(2000);  // source and target lengths drawn independently
  const EpochPlan longer = plan_epoch(*c, {.batch_size = 20, .pool_batches = 10, .seed = 1}, 0);
  const EpochPlan source =
      plan_epoch(*c, {.batch_size = 20, .pool_batches = 10, .sort_key = SortKey::source, .seed = 1}, 0);
  expect_permutation_of_corpus(longer, 2000);
  for (const auto& b : longer.batches)
    for (size_t i = 1; i < b.size(); ++i)
      EXPECT_FALSE(sorts_before(c->examples[b[i]], c->examples[b[i - 1]], SortKey::longer_side));
  // Sorted by source length a batch's targets span nearly the whole range of lengths (this corpus draws the
  // two sides independently); sorted by the longer side neither side is far from the batch's longest. The
  // target side, where most of a step's work is, pads far less; both sides together pad less too.
  const PlanPadding l = padding_of(*c, longer), s = padding_of(*c, source);
  EXPECT_LT(l.tgt_padded, s.tgt_padded * 8 / 10);
  EXPECT_LT(l.src_padded + l.tgt_padded, s.src_padded + s.tgt_padded);
}

TEST(PlanPadding, CountsRealAndPaddedPositionsOfEachSide) {
  Corpus c;
  for (auto [src, tgt] : {std::pair{2, 5}, std::pair{4, 1}, std::pair{3, 3}}) {
    ExampleIds e;
    e.src.assign(static_cast<size_t>(src), 7);
    e.tgt.assign(static_cast<size_t>(tgt), 8);
    c.examples.push_back(e);
  }
  const PlanPadding p = padding_of(c, EpochPlan{{{0, 1}, {2}}});
  // Batch {0, 1}: sources 2 + 4 padded to 2 x 4, decoder steps 6 + 2 padded to 2 x 6; batch {2}: 3 and 4.
  EXPECT_EQ(p.src_real, 9);
  EXPECT_EQ(p.src_padded, 11);
  EXPECT_EQ(p.tgt_real, 12);
  EXPECT_EQ(p.tgt_padded, 16);
  EXPECT_DOUBLE_EQ(p.src_fraction(), 2.0 / 11.0);
  EXPECT_DOUBLE_EQ(p.tgt_fraction(), 4.0 / 16.0);
  EXPECT_EQ(padding_of(c, EpochPlan{}).tgt_fraction(), 0.0);
  // Trained as 2 shards (2 processes, or 2 accumulated parts), {0, 1} is two batches of one pair: no padding.
  const PlanPadding two = padding_of(c, EpochPlan{{{0, 1}}}, 2);
  EXPECT_EQ(two.src_real, 6);
  EXPECT_EQ(two.src_padded, 6);
  EXPECT_EQ(two.tgt_padded, 8);
  EXPECT_ERROR_HAS(padding_of(c, EpochPlan{}, 0), "0 shards");
}

TEST(SortKey, OrdersByTheLongerSideThenTargetThenSource) {
  static const std::vector<int32_t> fives(16, 5), sixes(16, 6);  // the ids the pairs below view
  auto ex = [](size_t src, size_t tgt) { return Example{{fives.data(), src}, {sixes.data(), tgt}, 0}; };
  // example_cost = max(src, tgt + 1)
  EXPECT_TRUE(sorts_before(ex(9, 2), ex(3, 9), SortKey::longer_side));  // cost 9 before cost 10
  EXPECT_FALSE(sorts_before(ex(3, 9), ex(9, 2), SortKey::longer_side));
  EXPECT_TRUE(sorts_before(ex(9, 5), ex(4, 8), SortKey::longer_side));   // cost 9 both: target 5 first
  EXPECT_TRUE(sorts_before(ex(7, 8), ex(9, 8), SortKey::longer_side));   // cost 9, target 8: source 7 first
  EXPECT_FALSE(sorts_before(ex(9, 8), ex(9, 8), SortKey::longer_side));  // a strict order
  EXPECT_TRUE(sorts_before(ex(3, 9), ex(9, 2), SortKey::source));
  EXPECT_TRUE(sorts_before(ex(4, 2), ex(4, 3), SortKey::source));
  EXPECT_EQ(parse_sort_key("source"), SortKey::source);
  EXPECT_EQ(parse_sort_key(sort_key_name(SortKey::longer_side)), SortKey::longer_side);
  EXPECT_ERROR_HAS(parse_sort_key("target"), "'target' is not one of: longer_side, source");
}

TEST(PlanEpoch, ByTokensRespectsThePaddedBudget) {
  auto c = testing::varied_corpus(1500);
  BatchingOptions o{.batch_size = 200, .by = BatchBy::tokens, .pool_batches = 8, .seed = 2};
  const EpochPlan p = plan_epoch(*c, o, 0);
  expect_permutation_of_corpus(p, 1500);
  int64_t total = 0;
  for (const auto& b : p.batches) {
    int64_t longest = 0;
    for (int64_t i : b) longest = std::max(longest, example_cost(c->examples[static_cast<size_t>(i)]));
    EXPECT_LE(longest * static_cast<int64_t>(b.size()), 200);
    // The padded batch tensors really are that size.
    const Batch batch = make_batch(*c, b);
    EXPECT_LE(batch.src.numel(), 200);
    EXPECT_LE(batch.tgt_out.numel(), 200);
    total += longest * static_cast<int64_t>(b.size());
  }
  // Greedy filling keeps batches reasonably full (> 70% of the budget on average).
  EXPECT_GT(static_cast<double>(total) / static_cast<double>(p.batches.size()), 140.0);
}

TEST(PlanEpoch, ByTokensGivesAnOverlongExampleItsOwnBatch) {
  Corpus c;
  c.examples = {{Ids(50, 4), Ids(3, 4), 1}, {Ids(2, 4), Ids(2, 4), 2}, {Ids(2, 4), Ids(2, 4), 3}};
  const EpochPlan p = plan_epoch(c, {.batch_size = 10, .by = BatchBy::tokens, .shuffle = false}, 0);
  EXPECT_EQ(p.batches, (std::vector<Ids>{{1, 2}, {0}}));
}

TEST(PlanEpoch, ShuffleIsAFunctionOfSeedAndEpoch) {
  auto c = testing::varied_corpus(500);
  BatchingOptions o{.batch_size = 16, .pool_batches = 4, .seed = 11};
  const auto a = plan_epoch(*c, o, 3).batches;
  EXPECT_EQ(plan_epoch(*c, o, 3).batches, a);          // same seed and epoch: same batches, same order
  EXPECT_NE(plan_epoch(*c, o, 4).batches, a);          // next epoch: a different order
  o.seed = 12;
  EXPECT_NE(plan_epoch(*c, o, 3).batches, a);          // different seed: different order
  // Different epochs differ in batch composition, not only in batch order.
  o.seed = 11;
  std::set<Ids> sa(a.begin(), a.end());
  const auto b = plan_epoch(*c, o, 4).batches;
  int64_t shared = 0;
  for (const auto& batch : b) shared += sa.count(batch);
  EXPECT_LT(shared, static_cast<int64_t>(b.size()) / 2);
}

TEST(PlanEpoch, NoShuffleKeepsFileOrderOfPoolsAndBatches) {
  auto c = testing::varied_corpus(100);
  const EpochPlan p = plan_epoch(*c, {.batch_size = 10, .pool_batches = 2, .shuffle = false}, 7);
  ASSERT_EQ(p.batches.size(), 10u);
  // Pool k holds examples [20k, 20k + 20) sorted by length; epochs do not matter.
  for (size_t k = 0; k < 5; ++k) {
    std::vector<int64_t> pool = p.batches[2 * k];
    pool.insert(pool.end(), p.batches[2 * k + 1].begin(), p.batches[2 * k + 1].end());
    std::sort(pool.begin(), pool.end());
    for (int64_t j = 0; j < 20; ++j) EXPECT_EQ(pool[static_cast<size_t>(j)], static_cast<int64_t>(20 * k) + j);
  }
  EXPECT_EQ(plan_epoch(*c, {.batch_size = 10, .pool_batches = 2, .shuffle = false}, 0).batches, p.batches);
}

TEST(Shard, ContiguousNearEqualSlices) {
  const Ids g = {10, 11, 12, 13, 14, 15, 16};
  EXPECT_EQ(shard_of(g, 0, 3), (Ids{10, 11, 12}));
  EXPECT_EQ(shard_of(g, 1, 3), (Ids{13, 14}));
  EXPECT_EQ(shard_of(g, 2, 3), (Ids{15, 16}));
  EXPECT_EQ(shard_of(g, 0, 1), g);
  EXPECT_ERROR_HAS(shard_of(g, 3, 3), "rank 3 of 3");
}

TEST(PlanEpoch, WorldSizeScalesTheGlobalBatchAndMergesUnshardableOnes) {
  auto c = testing::varied_corpus(101);
  BatchingOptions one{.batch_size = 20, .pool_batches = 3, .seed = 4};
  BatchingOptions two = one;
  two.batch_size = 10;
  two.world_size = 2;
  // Global batches of 2 ranks x 10 equal those of 1 rank x 20 except the lone example of the last pool
  // (101 = 60 + 41 -> batches of 20, 20, 1), which cannot feed two ranks and joins the batch before it.
  const EpochPlan p1 = plan_epoch(*c, one, 0), p2 = plan_epoch(*c, two, 0);
  expect_permutation_of_corpus(p1, 101);
  expect_permutation_of_corpus(p2, 101);  // nothing left out
  ASSERT_EQ(p2.batches.size() + 1, p1.batches.size());
  std::vector<Ids> two_ranks = p2.batches;
  std::sort(two_ranks.begin(), two_ranks.end());
  int64_t unchanged = 0;
  for (const auto& b : p1.batches) unchanged += std::binary_search(two_ranks.begin(), two_ranks.end(), b);
  EXPECT_EQ(unchanged, static_cast<int64_t>(p1.batches.size()) - 2);  // all but the lone one and its host
  for (const auto& b : p2.batches) EXPECT_GE(b.size(), 2u);
}

// A token budget too small for one pair per rank used to cut batches of a single pair, which two ranks
// cannot share: every batch was dropped and an epoch trained on nothing. Batches now hold at least one pair
// per rank, going over the budget when they must, and nothing is left out.
TEST(PlanEpoch, TokenBudgetBelowOnePairPerRankStillFeedsEveryRank) {
  auto c = testing::varied_corpus(101);
  for (const int world : {2, 3}) {
    for (const int64_t budget : {1, 5, 10, 40}) {
      for (const int64_t pool : {1, 1000}) {
        BatchingOptions o{.batch_size = budget, .by = BatchBy::tokens, .pool_batches = pool, .seed = 4};
        o.world_size = world;
        const EpochPlan p = plan_epoch(*c, o, 0);
        expect_permutation_of_corpus(p, 101);
        size_t largest = 0;
        for (const auto& b : p.batches) {
          EXPECT_GE(static_cast<int>(b.size()), world) << "world " << world << ", budget " << budget;
          largest = std::max(largest, b.size());
        }
        // Short batches are gathered to N pairs, not piled into one batch of the whole corpus.
        if (budget == 1) {
          EXPECT_LT(static_cast<int>(largest), 2 * world) << "world " << world << ", pool " << pool;
        }
      }
    }
  }
  // One rank keeps the old rule: a batch goes over the budget only for a single pair longer than it.
  const EpochPlan one = plan_epoch(*c, {.batch_size = 1, .by = BatchBy::tokens, .seed = 4}, 0);
  EXPECT_EQ(one.batches.size(), 101u);
}

// Whether an epoch can be shared must not depend on the shuffle: with 2 pairs on 2 ranks, every epoch of
// every seed is one batch of both pairs (some seeds used to give epochs with no batch at all).
TEST(PlanEpoch, EveryEpochOfEverySeedFeedsEveryRank) {
  auto c = testing::varied_corpus(2);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    for (int64_t epoch = 0; epoch < 5; ++epoch) {
      BatchingOptions o{.batch_size = 2, .by = BatchBy::tokens, .pool_batches = 1, .seed = seed};
      o.world_size = 2;
      const EpochPlan p = plan_epoch(*c, o, epoch);
      ASSERT_EQ(p.batches.size(), 1u) << "seed " << seed << ", epoch " << epoch;
      EXPECT_EQ(p.batches[0].size(), 2u);
    }
  }
}

TEST(BatchBy, ParsesNames) {
  EXPECT_EQ(parse_batch_by("tokens"), BatchBy::tokens);
  EXPECT_EQ(parse_batch_by("sentences"), BatchBy::sentences);
  EXPECT_ERROR_HAS(parse_batch_by("words"), "'words'");
}

}  // namespace
}  // namespace luong::nmt
