// Length-bucketed batching with a deterministic shuffle, and the data-parallel split.
//
// One epoch's plan (plan_epoch), for options (batch_size B, unit, pool P, world size N; with gradient
// accumulation N counts world_size x accumulate shards, see BatchingOptions::accumulate):
//   1. order the examples: a Fisher-Yates shuffle drawn from Philox under (seed, epoch), or file order when
//      shuffle is off;
//   2. cut that order into pools of P global batches (P * N * B sentences, or P * N * B tokens by the cost
//      below) and sort each pool stably by the sort key, so batches hold similar lengths;
//   3. cut each sorted pool into global batches of N * B sentences, or of at most N * B tokens where a batch
//      costs sentences x max(src_len, tgt_len + 1) (its padded size), but never fewer than N sentences (a
//      batch too long for that budget goes over it: with N = 1, a single longer pair gets its own batch);
//   4. shuffle the order of the global batches (again Philox under (seed, epoch)), unless shuffle is off.
// Rank r of N then trains on the r-th contiguous slice of each global batch (shard_of), so the ranks' shards are
// disjoint and together are exactly the global batch one rank with batch N * B would see. With N > 1, a
// batch of fewer than N sentences (the last of a pool) could not feed every rank: it is merged into its
// neighbour, so no pair is left out of an epoch (and one rank's plan differs from N ranks' only there).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/nmt/data/corpus.h"

namespace luong::nmt {

enum class BatchBy { sentences, tokens };
BatchBy parse_batch_by(const std::string& name);  // "sentences" | "tokens"

// The order of a pool (data.sort_by). A batch pads both sides to its longest pair, and the decoder and the
// generator do about three quarters of a step's work, so sorting by the source alone leaves the target
// side padded: on Multi30k (batches of 64) 12.9% of the target positions a step computes are padding.
//   longer_side: by example_cost (the longer side, as padded), then target length, then source length;
//                on Multi30k 3.5% of the target and 5.9% of the source positions are then padding (the
//                training log prints the plan's shares), and training runs 9% more tokens a second
//                (docs/PERFORMANCE.md, "Less padding").
//   source:      by source length, then target length; the order of luong before data.sort_by existed,
//                which a run resumed from such a checkpoint keeps (NmtTask::load_state).
enum class SortKey { longer_side, source };
SortKey parse_sort_key(const std::string& name);  // "longer_side" | "source"
const char* sort_key_name(SortKey key);
bool sorts_before(const Example& x, const Example& y, SortKey key);

struct BatchingOptions {
  int64_t batch_size = 64;   // per rank, in units of `by`
  BatchBy by = BatchBy::sentences;
  int64_t pool_batches = 100;
  SortKey sort_key = SortKey::longer_side;
  bool shuffle = true;       // off: file order, no batch shuffle (validation, translation)
  uint64_t seed = 0;
  int world_size = 1;
  int rank = 0;
  // Gradient accumulation (train.accumulate): each rank trains on this many parts of every global batch, one
  // after another, before the optimizer step. The plan is that of world_size x accumulate ranks, and rank r's
  // parts are the shards r x accumulate .. r x accumulate + accumulate - 1 of it: one process accumulating N
  // parts sees exactly the batches N processes would.
  int accumulate = 1;
  int64_t shards() const { return int64_t{world_size} * accumulate; }  // of each global batch
};

struct EpochPlan {
  std::vector<std::vector<int64_t>> batches;  // global batches: example indices, length-sorted within a batch
};

EpochPlan plan_epoch(const Corpus& corpus, const BatchingOptions& options, int64_t epoch);

// The rank-th of world_size contiguous, near-equal slices of a global batch (the first size % world_size
// slices have one extra sentence).
std::vector<int64_t> shard_of(const std::vector<int64_t>& global, int64_t rank, int64_t world_size);

// Padded cost of one example in the token budget: max(src_len, tgt_len + 1).
int64_t example_cost(const Example& e);

// Positions a plan's batches hold and how many of them are real tokens: a batch pads its sources to its
// longest source and its decoder steps (target + </s>) to its longest target (make_batch). With `shards`
// > 1 every global batch is trained as that many shards (processes x accumulated parts), each padded alone.
struct PlanPadding {
  int64_t src_real = 0, src_padded = 0, tgt_real = 0, tgt_padded = 0;
  double src_fraction() const;  // of the padded positions, the share that is padding (0 for an empty plan)
  double tgt_fraction() const;
};
PlanPadding padding_of(const Corpus& corpus, const EpochPlan& plan, int64_t shards = 1);

}  // namespace luong::nmt
