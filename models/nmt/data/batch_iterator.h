// BatchIterator: walks the epochs of plan_epoch (batching.h), yielding this rank's padded shard of each
// global batch. Its whole position is IteratorState (epoch, index of the next global batch in that epoch's
// order): because the plan is a pure function of (corpus, options, epoch), an iterator given the same state
// yields the same following batches, which is what exact resume from a checkpoint needs.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/nmt/data/batch.h"
#include "models/nmt/data/batching.h"

namespace luong::nmt {

struct IteratorState {
  int64_t epoch = 0;  // 0-based
  int64_t index = 0;  // next global batch within the epoch
  bool operator==(const IteratorState&) const = default;
};

class BatchIterator {
 public:
  BatchIterator(std::shared_ptr<const Corpus> corpus, BatchingOptions options);

  // This rank's shard of the next global batch, or nullopt when the epoch is over; the state then moves
  // to (epoch + 1, 0), so the next call starts the next epoch. For options without accumulation.
  std::optional<Batch> next();
  // The same with accumulation: this rank's options.accumulate parts of the next global batch (shards
  // rank x accumulate + 0, 1, ... of options.shards(), each holding at least one pair), or nullopt.
  std::optional<std::vector<Batch>> next_parts();

  IteratorState state() const { return state_; }
  void set_state(const IteratorState& state);  // throws if index is beyond that epoch's batches

  int64_t batches_in_epoch();  // global batches in the current epoch
  PlanPadding padding();       // of the current epoch's plan, as this job's shards pad it (padding_of)
  const BatchingOptions& options() const { return options_; }

 private:
  const EpochPlan& plan();  // of state_.epoch, computed once per epoch

  std::shared_ptr<const Corpus> corpus_;
  BatchingOptions options_;
  IteratorState state_;
  int64_t plan_epoch_ = -1;
  EpochPlan plan_;
};

}  // namespace luong::nmt
