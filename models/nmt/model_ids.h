// Host-side reshaping of token-id batches for the model: the data pipeline hands batch-major (B, T) ids,
// the recurrent layers step along time, so ids are turned time-major once per batch (not per step).
#pragma once
#include <cstdint>
#include <vector>

#include "framework/tensor/tensor.h"

namespace luong::nmt {

// ids (B, T) int64 -> (T, B) int64 on `device`. With `reverse_within` (source reversal, Luong et al. 2015
// §4.1), each row's first lengths[b] ids are reversed and its padding stays at the end.
Tensor time_major_ids(const Tensor& ids, Device device, const std::vector<int64_t>& lengths = {},
                      bool reverse_within = false);
// (B, S) uint8, 1 where s < lengths[b].
Tensor length_mask(const std::vector<int64_t>& lengths, int64_t max_len, Device device);
// Checks ids are (B, T) int64 and lengths has B entries in [1, T]; names `what` in the message.
void check_id_batch(const char* what, const Tensor& ids, const std::vector<int64_t>& lengths);

}  // namespace luong::nmt
