#include "framework/autograd/weight_grad_deferral.h"

#include "framework/ops/tensor_math.h"

namespace luong {
namespace {
thread_local WeightGradDeferral* g_current = nullptr;
thread_local int64_t g_deferred_count = 0;
}  // namespace

WeightGradDeferral::WeightGradDeferral(std::unordered_map<VariableImpl*, int> uses)
    : uses_(std::move(uses)), previous_(g_current) {
  g_current = this;
}

WeightGradDeferral::~WeightGradDeferral() { g_current = previous_; }

WeightGradDeferral* WeightGradDeferral::current() { return g_current; }

int64_t WeightGradDeferral::deferred_count() { return g_deferred_count; }

bool WeightGradDeferral::defer(const std::shared_ptr<VariableImpl>& v, const Tensor& a, const Tensor& g) {
  const Tensor& w = v->data;
  if (w.dim() != 2) return false;
  const int64_t m = a.numel() / w.size(0);
  if (m > kMaxRows || m * w.size(0) != a.numel() || m * w.size(1) != g.numel()) return false;
  auto it = uses_.find(v.get());
  if (it == uses_.end() || it->second < 2) return false;  // one consumer: nothing to batch
  Pending& p = pending_[v.get()];
  if (!p.variable) p.variable = v;
  p.a.push_back(a);
  p.g.push_back(g);
  ++g_deferred_count;
  return true;
}

void WeightGradDeferral::flush(VariableImpl& v) {
  auto it = pending_.find(&v);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  bool overwrite = false;
  Tensor& target = grad_to_write(v, overwrite);
  add_matmul_tn_stacked_(target, p.a, p.g, overwrite);
}

}  // namespace luong
