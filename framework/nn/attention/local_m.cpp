// local-m (Luong et al. 2015, §3.2, monotonic alignment): p_t = t, clamped to the sentence's last source
// position, and a_t = softmax(score) over the window [p_t - D, p_t + D] clipped to the sentence.
#include <algorithm>

#include "framework/nn/attention/local.h"

namespace luong {
namespace {

class LocalMAttention : public LocalAttention {
 public:
  explicit LocalMAttention(const AttentionOptions& o) : LocalAttention(o, "local-m") {}

  AttentionOutput attend(const Variable& h_t, const AttentionMemory& mem, int64_t t) const override {
    check_attention_inputs("local-m", h_t, mem);
    LUONG_CHECK(t >= 0, "attention 'local-m': step ", t, " is negative");
    std::vector<double> centers;
    for (int64_t len : mem.lengths) centers.push_back(static_cast<double>(std::min(t, len - 1)));
    return attend_window(h_t, mem, window_mask(mem, centers));
  }
};

}  // namespace

LUONG_REGISTER_ATTENTION("local-m", LocalMAttention, "local attention, monotonic p_t = t (window D)");

}  // namespace luong
