#include "models/nmt/data/batch_iterator.h"

#include "framework/core/error.h"

namespace luong::nmt {

BatchIterator::BatchIterator(std::shared_ptr<const Corpus> corpus, BatchingOptions options)
    : corpus_(std::move(corpus)), options_(options) {
  LUONG_CHECK(corpus_ != nullptr, "BatchIterator: no corpus");
  LUONG_CHECK(!corpus_->examples.empty(), "BatchIterator: the corpus has no examples (all lines empty or too long?)");
  // Each process (each part of one, accumulating) needs a pair of every global batch (batching.h): fewer pairs
  // than that make none.
  LUONG_CHECK(options_.accumulate > 0, "BatchIterator: accumulate ", options_.accumulate, " is not a count of parts");
  const bool parts = options_.accumulate > 1;
  LUONG_CHECK(static_cast<int64_t>(corpus_->examples.size()) >= options_.shards(), "the ", corpus_->examples.size(),
              " training pairs cannot be shared by ", options_.world_size,
              parts ? str(" process(es) x train.accumulate ", options_.accumulate, " parts") : " processes",
              " (each needs at least one pair of every batch): use more data, fewer processes",
              parts ? " or a smaller train.accumulate" : "");
}

const EpochPlan& BatchIterator::plan() {
  if (plan_epoch_ != state_.epoch) {
    plan_ = plan_epoch(*corpus_, options_, state_.epoch);
    plan_epoch_ = state_.epoch;
  }
  return plan_;
}

int64_t BatchIterator::batches_in_epoch() { return static_cast<int64_t>(plan().batches.size()); }

PlanPadding BatchIterator::padding() { return padding_of(*corpus_, plan(), options_.shards()); }

void BatchIterator::set_state(const IteratorState& s) {
  if (s.epoch < 0 || s.index < 0)
    LUONG_FAIL("the saved data position (epoch ", s.epoch + 1, ", batch ", s.index, ") is invalid");
  state_ = s;
  if (s.index > batches_in_epoch())
    LUONG_FAIL("the saved data position (batch ", s.index, " of epoch ", s.epoch + 1, ") is beyond the ",
               batches_in_epoch(), " batches an epoch has now: were the corpus, train.batch_size, train.accumulate or ",
               "the number of processes changed?");
}

std::optional<std::vector<Batch>> BatchIterator::next_parts() {
  const EpochPlan& p = plan();
  if (state_.index >= static_cast<int64_t>(p.batches.size())) {
    state_ = {state_.epoch + 1, 0};
    return std::nullopt;
  }
  const std::vector<int64_t>& global = p.batches[static_cast<size_t>(state_.index)];
  ++state_.index;
  int64_t global_tgt_tokens = 0;
  for (int64_t i : global)
    global_tgt_tokens += static_cast<int64_t>(corpus_->examples[static_cast<size_t>(i)].tgt.size()) + 1;
  std::vector<Batch> parts;
  parts.reserve(static_cast<size_t>(options_.accumulate));
  for (int m = 0; m < options_.accumulate; ++m) {
    Batch b =
        make_batch(*corpus_, shard_of(global, int64_t{options_.rank} * options_.accumulate + m, options_.shards()));
    b.global_sentences = static_cast<int64_t>(global.size());
    b.global_tgt_tokens = global_tgt_tokens;
    parts.push_back(std::move(b));
  }
  return parts;
}

std::optional<Batch> BatchIterator::next() {
  LUONG_CHECK(options_.accumulate == 1, "BatchIterator::next() gives one part; with accumulate ", options_.accumulate,
              " use next_parts()");
  std::optional<std::vector<Batch>> parts = next_parts();
  if (!parts) return std::nullopt;
  return std::move(parts->front());
}

}  // namespace luong::nmt
