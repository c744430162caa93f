#include "models/nmt/data/batch_iterator.h"

#include "framework/core/error.h"

namespace luong::nmt {

BatchIterator::BatchIterator(std::shared_ptr<const Corpus> corpus, BatchingOptions options)
    : corpus_(std::move(corpus)), options_(options) {
  LUONG_CHECK(corpus_ != nullptr, "BatchIterator: no corpus");
  LUONG_CHECK(!corpus_->examples.empty(), "BatchIterator: the corpus has no examples (all lines empty or too long?)");
}

const EpochPlan& BatchIterator::plan() {
  if (plan_epoch_ != state_.epoch) {
    plan_ = plan_epoch(*corpus_, options_, state_.epoch);
    plan_epoch_ = state_.epoch;
  }
  return plan_;
}

int64_t BatchIterator::batches_in_epoch() { return static_cast<int64_t>(plan().batches.size()); }
int64_t BatchIterator::dropped_examples() { return plan().dropped_examples; }

void BatchIterator::set_state(const IteratorState& s) {
  LUONG_CHECK(s.epoch >= 0 && s.index >= 0, "BatchIterator::set_state: bad state (epoch ", s.epoch, ", index ",
              s.index, ")");
  state_ = s;
  LUONG_CHECK(s.index <= batches_in_epoch(), "BatchIterator::set_state: index ", s.index, " is beyond the ",
              batches_in_epoch(), " batches of epoch ", s.epoch, " (was the corpus or batch size changed?)");
}

std::optional<Batch> BatchIterator::next() {
  const EpochPlan& p = plan();
  if (state_.index >= static_cast<int64_t>(p.batches.size())) {
    state_ = {state_.epoch + 1, 0};
    return std::nullopt;
  }
  const std::vector<int64_t>& global = p.batches[static_cast<size_t>(state_.index)];
  ++state_.index;
  Batch b = make_batch(*corpus_, shard_of(global, options_.rank, options_.world_size));
  b.global_sentences = static_cast<int64_t>(global.size());
  b.global_tgt_tokens = 0;
  for (int64_t i : global) b.global_tgt_tokens += static_cast<int64_t>(corpus_->examples[static_cast<size_t>(i)].tgt.size()) + 1;
  return b;
}

}  // namespace luong::nmt
