// The teacher-forced loss of an ensemble (`luong eval` with several checkpoints): per target token, minus the
// log of the mean of the members' probabilities (models/nmt/ensemble.h).
#pragma once
#include <cstdint>
#include <vector>

#include "framework/train/train_task.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/ensemble.h"

namespace luong::nmt {

struct Batch;

// Each target position's log-probability under `model` for a batch, time-major (row t * B + b; padding 0), from
// the fused generator loss (no (T * B, V) tensor of log-probabilities). src_lengths: the batch's, as a vector.
std::vector<double> target_log_probs(const NmtModel& model, const Batch& b, const std::vector<int64_t>& src_lengths,
                                     Device device);

// The summed loss and token count over `corpus`, in the batches evaluate_loss uses. One member gives that
// model's evaluate_loss, bit for bit.
ValidationResult evaluate_loss(const Ensemble& models, const Corpus& corpus, int64_t batch_size, Device device);

}  // namespace luong::nmt
