// The teacher-forced loss of an ensemble (`luong eval` with several checkpoints): per target token, minus the
// log of the mean of the members' probabilities (models/nmt/ensemble.h).
#pragma once
#include <cstdint>

#include "framework/train/train_task.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/ensemble.h"

namespace luong::nmt {

// The summed loss and token count over `corpus`, in the batches evaluate_loss uses. One member gives that
// model's evaluate_loss, bit for bit.
ValidationResult evaluate_loss(const Ensemble& models, const Corpus& corpus, int64_t batch_size, Device device);

}  // namespace luong::nmt
