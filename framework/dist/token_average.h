// Token-weighted gradient averaging across ranks. The trainer sums per-token losses, so after the Reducer
// each gradient element is the sum over every target token of the job; dividing by the job's total token
// count gives the per-token mean, the same value one process would compute on the whole global batch,
// however unevenly tokens (padding) are spread over the ranks.
#pragma once
#include <cstdint>

#include "framework/autograd/flat_parameters.h"
#include "framework/dist/process_group.h"

namespace luong {

struct StepTotals {
  double loss_sum = 0.0;  // summed token losses over all ranks
  int64_t tokens = 0;     // target tokens (not ignore_index) over all ranks
};

// Blocking: sums this rank's loss and token count over all ranks (the count exactly, as an int64).
StepTotals all_reduce_step_totals(ProcessGroup& group, double loss_sum, int64_t tokens);

// grad /= tokens. Throws when tokens <= 0 (a step with no target tokens anywhere has no mean).
void scale_gradients_by_tokens(FlatParameters& params, int64_t tokens);

}  // namespace luong
