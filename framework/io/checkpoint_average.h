// Checkpoint averaging (for `luong average`): the mean of the model parameters of several checkpoints.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"
#include "framework/io/state_dict.h"

namespace luong {

// Throws (naming both files and what differs) when `other` must not be averaged with `first`, e.g. because
// their vocabularies or model configurations differ. `first` holds the first file's path, strings and
// metadata only (its tensors are not kept).
using AverageCompatibility = std::function<void(const Checkpoint& first, const Checkpoint& other)>;

// Averages every floating tensor under "model/" over `paths` (accumulated in float64, returned in each
// tensor's own dtype). The average is a model for evaluation and translation, not a training checkpoint:
// training state (entries under optim/, schedule/, trainer/ and data/) is dropped, since the optimizer
// moments and data position of one member do not belong to the average. Every other entry (config,
// vocabularies, integer model tensors) and the root metadata (world_size, dtype, ... but not the
// attributes the writer sets itself) come from the first path; the result's `path` is empty.
// All checkpoints must hold the same model tensors with the same shapes; the error names the parameter, the
// file and both shapes. A NaN or infinity in an input's model tensor, or in the average (a float64 sum can
// overflow), is an error naming the file (or "the average") and the parameter. `compatible`, when given, is
// called for every file after the first. Files are loaded one at a time.
Checkpoint average_checkpoints(const std::vector<std::string>& paths, const AverageCompatibility& compatible = {});

// True for the entries that describe a training run's progress rather than the model (see above).
bool is_training_state_entry(const std::string& name);

}  // namespace luong
