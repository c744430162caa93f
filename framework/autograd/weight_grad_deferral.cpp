#include "framework/autograd/weight_grad_deferral.h"

#include "framework/ops/tensor_math.h"

namespace luong {
namespace {
thread_local WeightGradDeferral* g_current = nullptr;
thread_local int64_t g_deferred_count = 0;
thread_local int64_t g_stacked_count = 0;

// The same tensors in the same order (a step's gradient is one buffer, seen by every weight it feeds).
bool same_parts(const std::vector<Tensor>& x, const std::vector<Tensor>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].raw() != y[i].raw() || x[i].numel() != y[i].numel() || x[i].dtype() != y[i].dtype()) return false;
  return true;
}
}  // namespace

WeightGradDeferral::WeightGradDeferral(uint64_t pass) : pass_(pass), previous_(g_current) {
  g_current = this;
}

WeightGradDeferral::~WeightGradDeferral() { g_current = previous_; }

WeightGradDeferral* WeightGradDeferral::current() { return g_current; }

int64_t WeightGradDeferral::deferred_count() { return g_deferred_count; }

int64_t WeightGradDeferral::stacked_count() { return g_stacked_count; }

int WeightGradDeferral::admit(const std::shared_ptr<VariableImpl>& v, int64_t rows, int64_t numel_a, int64_t numel_g) {
  const Tensor& w = v->data;
  const int64_t k = w.dim() == 2 ? w.size(0) : 1, n = w.size(w.dim() - 1);
  if (rows > kMaxRows || rows * k != numel_a || rows * n != numel_g) return 0;
  const int uses = v->pass_uses.in(pass_);
  return uses >= 2 ? uses : 0;  // one consumer: nothing to batch
}

bool WeightGradDeferral::defer(const std::shared_ptr<VariableImpl>& v, const Tensor& a, const Tensor& g) {
  const Tensor& w = v->data;
  if (w.dim() != 2 || w.numel() == 0) return false;
  const int64_t m = a.numel() / w.size(0);
  const int uses = admit(v, m, a.numel(), g.numel());
  if (!uses) return false;
  Pending& p = pending_[v.get()];
  if (!p.variable) {
    p.variable = v;
    p.a.reserve(static_cast<size_t>(uses));  // at most one product per use: no regrowth of the lists
    p.g.reserve(static_cast<size_t>(uses));
  }
  p.a.push_back(a);
  p.g.push_back(g);
  ++g_deferred_count;
  return true;
}

bool WeightGradDeferral::defer_column_sum(const std::shared_ptr<VariableImpl>& v, const Tensor& g) {
  const Tensor& b = v->data;
  if (b.dim() != 1 || b.numel() == 0) return false;
  const int64_t m = g.numel() / b.numel();
  const int uses = admit(v, m, m, g.numel());
  if (!uses) return false;
  Pending& p = pending_[v.get()];
  if (!p.variable) {
    p.variable = v;
    p.column_sum = true;
    p.g.reserve(static_cast<size_t>(uses));
  }
  p.g.push_back(g);
  ++g_deferred_count;
  return true;
}

int WeightGradDeferral::sharers(const std::vector<Tensor>& parts) const {
  int n = 0;
  for (const auto& [impl, p] : pending_) n += same_parts(p.g, parts) ? 1 : 0;
  return n;
}

Tensor WeightGradDeferral::shared_stack(const std::vector<Tensor>& parts, int64_t cols, bool keep, bool required) {
  for (const SharedStack& s : stacks_)
    if (same_parts(s.parts, parts) && s.rows.size(1) == cols) return s.rows;
  if (!keep && !required) return Tensor();  // the GEMM reads the parts in place
  ++g_stacked_count;
  Tensor rows = stack_rows(parts, cols);
  if (keep) stacks_.push_back({parts, rows});
  return rows;
}

void WeightGradDeferral::release_stack(const std::vector<Tensor>& parts) {
  for (auto it = stacks_.begin(); it != stacks_.end(); ++it)
    if (same_parts(it->parts, parts)) {
      stacks_.erase(it);
      return;
    }
}

void WeightGradDeferral::flush(VariableImpl& v) {
  auto it = pending_.find(&v);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  bool overwrite = false;
  Tensor& target = grad_to_write(v, overwrite);
  const int64_t cols = v.data.size(v.data.dim() - 1);
  const bool keep = p.g.size() > 1 && sharers(p.g) > 0;  // another weight still to flush has the same g
  if (p.column_sum) {
    add_column_sums_(target, p.g.size() == 1 ? p.g.front() : shared_stack(p.g, cols, keep, /*required=*/true),
                     overwrite);
  } else {
    int64_t rows = 0;
    for (const Tensor& g : p.g) rows += g.numel() / cols;
    // Stacked here (and counted) whenever the GEMM would stack g itself.
    const bool in_place = stacked_gemm_reads_parts_in_place(target, rows);
    const Tensor g = p.g.size() == 1 ? Tensor() : shared_stack(p.g, cols, keep, /*required=*/!in_place);
    add_matmul_tn_stacked_(target, p.a, p.g, overwrite, g.defined() ? &g : nullptr);
  }
  if (!keep) release_stack(p.g);
}

}  // namespace luong
