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
// tensor's own dtype); every other entry (optimizer state, counters, config, integer tensors) is taken from
// the last path. All checkpoints must hold the same model tensors with the same shapes; the error names
// the parameter, the file and both shapes; `compatible`, when given, is called for every file after the first.
// Files are loaded one at a time.
StateDict average_checkpoints(const std::vector<std::string>& paths, const AverageCompatibility& compatible = {});

}  // namespace luong
