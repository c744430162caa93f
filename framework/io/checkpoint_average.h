// Checkpoint averaging (for `luong average`): the mean of the model parameters of several checkpoints.
#pragma once
#include <string>
#include <vector>

#include "framework/io/state_dict.h"

namespace luong {

// Averages every floating tensor under "model/" over `paths` (accumulated in float64, returned in each
// tensor's own dtype); every other entry (optimizer state, counters, config, integer tensors) is taken from
// the last path. All checkpoints must hold the same model tensors with the same shapes; the error names
// the parameter, the file and both shapes. Files are loaded one at a time.
StateDict average_checkpoints(const std::vector<std::string>& paths);

}  // namespace luong
