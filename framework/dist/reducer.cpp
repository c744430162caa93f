#include "framework/dist/reducer.h"

#include <algorithm>

#include "framework/dist/checksum.h"

namespace luong {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

int64_t cap_bytes(double mb, const char* what) {
  LUONG_CHECK(mb > 0, "Reducer: ", what, " must be positive, got ", mb);
  return static_cast<int64_t>(mb * kMiB);
}

}  // namespace

std::vector<GradBucket> plan_buckets(const std::vector<int64_t>& param_numels, size_t element_size,
                                     const ReducerOptions& options) {
  std::vector<int64_t> offsets(param_numels.size());
  int64_t total = 0;
  for (size_t i = 0; i < param_numels.size(); ++i) offsets[i] = total, total += param_numels[i];

  const int64_t first_cap = cap_bytes(options.first_bucket_mb, "first_bucket_mb");
  const int64_t cap = cap_bytes(options.bucket_mb, "bucket_mb");
  const auto esize = static_cast<int64_t>(element_size);
  std::vector<GradBucket> buckets;
  GradBucket cur;
  for (size_t k = param_numels.size(); k-- > 0;) {
    const int64_t limit = buckets.empty() ? first_cap : cap;
    // A bucket never exceeds its cap unless a single parameter does.
    if (!cur.params.empty() && (cur.numel + param_numels[k]) * esize > limit) {
      buckets.push_back(std::move(cur));
      cur = GradBucket{};
    }
    // Walking backwards over contiguous parameters: the bucket grows downwards in the flat buffer.
    cur.offset = offsets[k];
    cur.numel += param_numels[k];
    cur.params.push_back(k);
  }
  if (!cur.params.empty()) buckets.push_back(std::move(cur));
  return buckets;
}

Reducer::Reducer(FlatParameters& params, ProcessGroup& group, ReducerOptions options)
    : params_(params), group_(group) {
  LUONG_CHECK(params.numel() > 0, "Reducer: no parameters");
  const auto& ps = params.params();
  std::vector<int64_t> numels;
  for (const auto& p : ps) numels.push_back(p.data().numel());
  buckets_ = plan_buckets(numels, dtype_size(params.grad().dtype()), options);

  bucket_of_param_.resize(ps.size());
  for (const auto& p : ps) trained_.push_back(p.requires_grad() ? 1 : 0);
  trained_in_bucket_.assign(buckets_.size(), 0);
  Fnv1a hash;
  hash.add_value(static_cast<uint64_t>(params.grad().dtype()));
  for (size_t b = 0; b < buckets_.size(); ++b) {
    GradBucket& bucket = buckets_[b];
    int64_t first = bucket.offset + bucket.numel, end = bucket.offset;
    for (size_t i : bucket.params) {
      bucket_of_param_[i] = b;
      if (!trained_[i]) continue;
      ++trained_in_bucket_[b];
      first = std::min(first, params.offset(i));
      end = std::max(end, params.offset(i) + ps[i].data().numel());
    }
    bucket.reduced = trained_in_bucket_[b] ? FlatSpan{first, end - first} : FlatSpan{bucket.offset, 0};
    hash.add_value(bucket.offset);
    hash.add_value(bucket.numel);
    hash.add_value(bucket.reduced.offset);
    hash.add_value(bucket.reduced.numel);
    for (size_t i : bucket.params) hash.add_value(static_cast<uint64_t>(i));
  }
  layout_hash_ = hash.value();
  check_same_on_all_ranks(group, layout_hash_,
                          "Reducer bucket layout (parameter sizes, order, dtype or the frozen parameters differ)");

  for (size_t i = 0; i < ps.size(); ++i) {
    Variable v = ps[i];
    v.set_grad_ready_hook([this, i](VariableImpl&) { on_grad_ready(i); });
  }
  reset_pass();
}

Reducer::~Reducer() {
  for (auto& w : work_) w.wait();  // the buffers must not be written after we are gone
  for (const auto& p : params_.params()) Variable(p).set_grad_ready_hook(nullptr);
}

void Reducer::set_sync_enabled(bool on) {
  LUONG_CHECK(!pass_open_, "Reducer: set_sync_enabled during a pass (call it before backward, after finish())");
  sync_enabled_ = on;
}

void Reducer::record(ReducerEvent::Kind kind, size_t index) {
  timeline_.push_back({kind, index, std::chrono::steady_clock::now()});
}

void Reducer::reset_pass() {
  pass_open_ = false;
  param_ready_.assign(params_.params().size(), 0);
  work_.assign(buckets_.size(), Work());
  completed_.assign(buckets_.size(), 0);
  next_launch_ = 0;
}

int64_t Reducer::reduced_numel() const {
  int64_t n = 0;
  for (const auto& b : buckets_) n += b.reduced.numel;
  return n;
}

size_t Reducer::sent_buckets() const {
  size_t n = 0;
  for (const auto& b : buckets_) n += b.reduced.numel > 0 ? 1 : 0;
  return n;
}

void Reducer::check_frozen_set_unchanged() const {
  const auto& ps = params_.params();
  for (size_t i = 0; i < ps.size(); ++i)
    LUONG_CHECK(ps[i].requires_grad() == static_cast<bool>(trained_[i]), "Reducer: parameter ", i, " ('", ps[i].name(),
                "') was ", trained_[i] ? "frozen" : "unfrozen", " after the Reducer was made; the ranks agreed on ",
                "which gradients to communicate when it was made: freeze parameters before making the Reducer");
}

void Reducer::open_pass() {
  pass_open_ = true;
  timeline_.clear();
  check_frozen_set_unchanged();
  // A bucket waits for the hooks of its trained parameters only: a frozen one fires none, and waiting for it
  // would hold its bucket, and every later one, until finish().
  pending_ = trained_in_bucket_;
}

void Reducer::on_grad_ready(size_t param) {
  if (!sync_enabled_) return;
  if (!pass_open_) open_pass();
  record(ReducerEvent::Kind::hook, param);
  LUONG_CHECK(!param_ready_[param], "Reducer: the gradient of parameter ", param, " ('",
              params_.params()[param].name(), "') became ready twice in one pass; call finish() after each "
              "backward, or set_sync_enabled(false) for gradient-accumulation passes");
  param_ready_[param] = 1;
  if (--pending_[bucket_of_param_[param]] == 0) launch_ready_buckets();
  poll_in_flight();
}

void Reducer::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() && pending_[next_launch_] == 0) launch(next_launch_++);
}

void Reducer::launch(size_t b) {
  if (buckets_[b].reduced.numel == 0) {  // frozen parameters alone: nothing to communicate
    completed_[b] = 1;
    return;
  }
  // grad_span: only this range's pending zeros (parameters that got no gradient this pass) are written; the
  // whole buffer's grad() would also zero every parameter whose gradient is still to come.
  Tensor view = params_.grad_span(buckets_[b].reduced);
  record(ReducerEvent::Kind::launch, b);
  work_[b] = group_.all_reduce_sum(view);
}

void Reducer::poll_in_flight() {
  // MPI advances a non-blocking collective only inside MPI calls: testing here, between pieces of
  // backward, is what lets a bucket finish while the rest of backward runs.
  for (size_t b = 0; b < next_launch_; ++b) {
    if (completed_[b] || !work_[b].test()) continue;
    completed_[b] = 1;
    record(ReducerEvent::Kind::complete, b);
  }
}

void Reducer::finish() {
  LUONG_CHECK(sync_enabled_, "Reducer: finish() with sync disabled (enable it for the last pass of the step)");
  if (!pass_open_) {  // a pass in which no gradient became ready (e.g. an empty shard)
    timeline_.clear();
    check_frozen_set_unchanged();
  }
  while (next_launch_ < buckets_.size()) launch(next_launch_++);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (completed_[b]) continue;
    work_[b].wait();
    record(ReducerEvent::Kind::complete, b);
  }
  reset_pass();
}

}  // namespace luong
