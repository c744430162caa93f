// Greedy decoding: at each step take the most probable token. Used by tests and as the simplest
// translation path; beam search builds on the same NmtModel::encode / decode_step API.
#pragma once
#include <cstdint>
#include <vector>

#include "models/nmt/ensemble.h"
#include "models/nmt/model.h"

namespace luong::nmt {

// src (B, S) int64 and lengths (B) -> per sentence the generated ids after bos, stopping before eos or
// after max_len tokens. <pad> and <s> are never generated (see never_output_tokens). Runs without recording
// gradients; the model should be in eval mode.
std::vector<std::vector<int64_t>> greedy_decode(const NmtModel& model, const Tensor& src,
                                                const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                int64_t max_len);
// The same over an ensemble's mixture distribution (one member: the model alone).
std::vector<std::vector<int64_t>> greedy_decode(const Ensemble& models, const Tensor& src,
                                                const std::vector<int64_t>& src_lengths, int64_t bos, int64_t eos,
                                                int64_t max_len);

}  // namespace luong::nmt
