#include "framework/dist/token_average.h"

#include <vector>

#include "framework/ops/tensor_math.h"

namespace luong {

StepTotals all_reduce_step_totals(ProcessGroup& group, double loss_sum, int64_t tokens) {
  std::vector<double> loss{loss_sum};
  std::vector<int64_t> count{tokens};
  group.all_reduce_scalars(loss);
  group.all_reduce_scalars(count);
  return {loss[0], count[0]};
}

void scale_gradients_by_tokens(FlatParameters& params, int64_t tokens) {
  LUONG_CHECK(tokens > 0, "scale_gradients_by_tokens: global token count is ", tokens,
              " (no target tokens in this step on any rank)");
  scale_(params.grad(), 1.0 / static_cast<double>(tokens));
}

}  // namespace luong
