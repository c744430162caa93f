// BatchIterator: epochs, exact resume from (epoch, index), and data-parallel shards.
#include <algorithm>
#include <cstdlib>
#include <map>

#include <gtest/gtest.h>

#include "models/nmt/data/batch_iterator.h"
#include "tests/data/batching_test_util.h"
#include "tests/data/test_files.h"

namespace luong::nmt {
namespace {

using Ids = std::vector<int64_t>;

void expect_same_batch(const Batch& a, const Batch& b) {
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.src.shape(), b.src.shape());
  EXPECT_EQ(a.src.to_vector(), b.src.to_vector());
  EXPECT_EQ(a.tgt_in.to_vector(), b.tgt_in.to_vector());
  EXPECT_EQ(a.tgt_out.to_vector(), b.tgt_out.to_vector());
}

TEST(BatchIterator, EndsEachEpochAndMovesToTheNext) {
  auto c = testing::varied_corpus(95);
  BatchIterator it(c, {.batch_size = 10, .pool_batches = 3, .seed = 1});
  const int64_t planned = it.batches_in_epoch();
  int64_t batches = 0, sentences = 0;
  while (auto b = it.next()) {
    ++batches;
    sentences += b->sentences;
    EXPECT_EQ(it.state().epoch, 0);
  }
  EXPECT_EQ(sentences, 95);
  EXPECT_EQ(batches, planned);
  EXPECT_EQ(it.state(), (IteratorState{1, 0}));
  ASSERT_TRUE(it.next().has_value());
  EXPECT_EQ(it.state(), (IteratorState{1, 1}));
}

TEST(BatchIterator, ResumesExactlyFromASavedState) {
  auto c = testing::varied_corpus(300);
  const BatchingOptions o{.batch_size = 16, .by = BatchBy::sentences, .pool_batches = 4, .seed = 9};
  BatchIterator a(c, o);
  // Run into the second epoch, then save.
  int64_t k = 0;
  for (; k < 25; ++k)
    if (!a.next()) a.next();
  const IteratorState saved = a.state();
  EXPECT_EQ(saved.epoch, 1);
  std::vector<Batch> expected;
  for (int i = 0; i < 30; ++i) {
    auto b = a.next();
    if (b) expected.push_back(std::move(*b));
  }
  BatchIterator b(c, o);  // a fresh iterator, as after a restart
  b.set_state(saved);
  std::vector<Batch> got;
  for (int i = 0; i < 30; ++i) {
    auto x = b.next();
    if (x) got.push_back(std::move(*x));
  }
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) expect_same_batch(got[i], expected[i]);
  EXPECT_EQ(b.state(), a.state());
}

TEST(BatchIterator, RejectsStatesBeyondTheEpoch) {
  auto c = testing::varied_corpus(50);
  BatchIterator it(c, {.batch_size = 10, .seed = 1});
  EXPECT_ERROR_HAS(it.set_state({0, 99}), "(batch 99 of epoch 1) is beyond the 5 batches an epoch has now");
  EXPECT_ERROR_HAS(it.set_state({0, 99}), "train.accumulate or the number of processes");
  EXPECT_ERROR_HAS(it.set_state({-1, 0}), "is invalid");
  auto empty = std::make_shared<Corpus>();
  EXPECT_ERROR_HAS(BatchIterator(empty, {}), "no examples");
  // Fewer pairs than processes: no batch could give every rank a pair.
  BatchingOptions three{.batch_size = 4};
  three.world_size = 3, three.rank = 1;
  EXPECT_ERROR_HAS(BatchIterator(testing::varied_corpus(2), three),
                   "the 2 training pairs cannot be shared by 3 processes");
  EXPECT_NO_THROW(BatchIterator(testing::varied_corpus(3), three));
}

TEST(BatchIterator, ShardsOfTwoRanksAreDisjointAndConcatenateToTheOneRankBatch) {
  auto c = testing::varied_corpus(400);
  for (BatchBy by : {BatchBy::sentences, BatchBy::tokens}) {
    const int64_t per_rank = by == BatchBy::sentences ? 12 : 150;
    BatchingOptions single{.batch_size = 2 * per_rank, .by = by, .pool_batches = 5, .seed = 21};
    BatchingOptions r0 = single, r1 = single;
    r0.batch_size = r1.batch_size = per_rank;
    r0.world_size = r1.world_size = 2;
    r1.rank = 1;
    BatchIterator one(c, single), a(c, r0), b(c, r1);
    // The one-rank global batches, keyed by their rows. A 1-sentence batch cannot be sharded: the two-rank
    // plan merges it into another batch (checked in batching_test), which may also change the batch order.
    std::map<Ids, Batch> global;
    Ids lone;
    while (auto g = one.next()) {
      if (g->sentences >= 2) global.emplace(g->indices, std::move(*g));
      else
        lone.push_back(g->indices[0]);
    }
    int64_t n = 0, merged = 0;
    while (auto x = a.next()) {
      auto y = b.next();
      ASSERT_TRUE(y.has_value());
      Ids joined = x->indices;
      joined.insert(joined.end(), y->indices.begin(), y->indices.end());
      for (int64_t i : x->indices) EXPECT_EQ(std::count(y->indices.begin(), y->indices.end(), i), 0);
      EXPECT_EQ(x->global_sentences, static_cast<int64_t>(joined.size()));
      EXPECT_LE(std::abs(x->sentences - y->sentences), 1);
      ++n;
      auto it = global.find(joined);
      if (it == global.end()) {  // a one-rank batch plus lone sentences, re-sorted by length
        ++merged;
        Ids rest;
        for (int64_t i : joined)
          if (std::find(lone.begin(), lone.end(), i) == lone.end()) rest.push_back(i);
        ASSERT_LT(rest.size(), joined.size()) << "rank shards do not form a one-rank global batch";
        std::sort(rest.begin(), rest.end());
        bool found = false;
        for (const auto& [rows, g] : global) {
          Ids sorted = rows;
          std::sort(sorted.begin(), sorted.end());
          found = found || sorted == rest;
        }
        EXPECT_TRUE(found) << "a merged batch is not a one-rank batch plus lone sentences";
        continue;
      }
      const Batch& g = it->second;
      EXPECT_EQ(x->sentences + y->sentences, g.sentences);
      EXPECT_EQ(x->tgt_tokens + y->tgt_tokens, g.tgt_tokens);
      EXPECT_EQ(x->global_tgt_tokens, g.tgt_tokens);
      EXPECT_EQ(y->global_sentences, g.sentences);
    }
    EXPECT_FALSE(b.next().has_value());  // both ranks end the epoch together
    EXPECT_EQ(n, static_cast<int64_t>(global.size()));
    EXPECT_LE(merged, static_cast<int64_t>(lone.size()));
    EXPECT_GT(n, 5);
  }
}

TEST(BatchIterator, OneRankGlobalCountsEqualLocalCounts) {
  auto c = testing::varied_corpus(40);
  BatchIterator it(c, {.batch_size = 8, .seed = 2});
  while (auto b = it.next()) {
    EXPECT_EQ(b->global_sentences, b->sentences);
    EXPECT_EQ(b->global_tgt_tokens, b->tgt_tokens);
  }
}

// Walks one epoch of `accumulating` (rank `rank` of `world` processes, `parts` parts each) beside iterators of
// world x parts ranks standing for its parts, expecting the same batches. Returns (steps, sentences).
std::pair<int64_t, int64_t> expect_parts_are_shards(std::shared_ptr<const Corpus> c, const BatchingOptions& base,
                                                    int world, int rank, int parts) {
  BatchingOptions o = base;
  o.world_size = world, o.rank = rank, o.accumulate = parts;
  BatchIterator accumulating(c, o);
  std::vector<BatchIterator> shards;
  for (int m = 0; m < parts; ++m) {
    BatchingOptions s = base;
    s.world_size = world * parts, s.rank = rank * parts + m;
    shards.emplace_back(c, s);
  }
  EXPECT_EQ(accumulating.batches_in_epoch(), shards[0].batches_in_epoch());
  int64_t steps = 0, sentences = 0;
  while (auto p = accumulating.next_parts()) {
    EXPECT_EQ(p->size(), static_cast<size_t>(parts));
    for (size_t m = 0; m < p->size(); ++m) {
      const std::optional<Batch> shard = shards[m].next();
      EXPECT_TRUE(shard.has_value());
      if (!shard) return {steps, sentences};
      expect_same_batch((*p)[m], *shard);
      EXPECT_GE((*p)[m].sentences, 1);
      EXPECT_EQ((*p)[m].global_sentences, shard->global_sentences);
      sentences += shard->sentences;
    }
    ++steps;
  }
  EXPECT_EQ(steps, shards[0].batches_in_epoch());
  EXPECT_FALSE(shards.back().next().has_value());  // both forms end the epoch together
  EXPECT_EQ(accumulating.state(), (IteratorState{1, 0}));
  return {steps, sentences};
}

// Gradient accumulation: one process's parts of a global batch are exactly the shards that as many processes
// would train on (same plan, same rows, same order), so accumulating N parts equals N processes.
TEST(BatchIterator, AccumulatedPartsAreTheShardsOfAsManyRanks) {
  auto c = testing::varied_corpus(300);
  for (BatchBy by : {BatchBy::sentences, BatchBy::tokens}) {
    const BatchingOptions base{.batch_size = by == BatchBy::sentences ? 6 : 90, .by = by, .pool_batches = 4, .seed = 5};
    // One process in 3 parts, against ranks 0, 1, 2 of three: every pair once an epoch.
    const auto [steps, sentences] = expect_parts_are_shards(c, base, 1, 0, 3);
    EXPECT_EQ(sentences, 300);
    // Rank 1 of two processes in 3 parts each: shards 3, 4, 5 of six ranks. Six shards make global batches
    // twice as large: a plan of its own, the same for both forms.
    const auto [six_steps, half] = expect_parts_are_shards(c, base, 2, 1, 3);
    EXPECT_LT(six_steps, steps);
    EXPECT_GT(half, 100);
  }
}

TEST(BatchIterator, AccumulationNeedsAPairForEveryPart) {
  BatchingOptions o{.batch_size = 4};
  o.world_size = 2, o.rank = 0, o.accumulate = 3;
  EXPECT_ERROR_HAS(BatchIterator(testing::varied_corpus(5), o),
                   "the 5 training pairs cannot be shared by 2 process(es) x train.accumulate 3 parts");
  BatchIterator it(testing::varied_corpus(6), o);
  EXPECT_ERROR_HAS(it.next(), "with accumulate 3 use next_parts()");
  o.pool_batches = int64_t{1} << 40;  // the pool's budget: 2^40 x 4 x 2 x 3 overflows 64 bits
  o.batch_size = int64_t{1} << 22;
  EXPECT_ERROR_HAS(BatchIterator(testing::varied_corpus(6), o).next_parts(), "is beyond a 64-bit count");
}

}  // namespace
}  // namespace luong::nmt
