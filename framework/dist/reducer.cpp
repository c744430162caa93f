#include "framework/dist/reducer.h"

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
  Fnv1a hash;
  hash.add_value(static_cast<uint64_t>(params.grad().dtype()));
  for (size_t b = 0; b < buckets_.size(); ++b) {
    hash.add_value(buckets_[b].offset);
    hash.add_value(buckets_[b].numel);
    for (size_t i : buckets_[b].params) bucket_of_param_[i] = b, hash.add_value(static_cast<uint64_t>(i));
  }
  layout_hash_ = hash.value();
  check_same_on_all_ranks(group, layout_hash_, "Reducer bucket layout (parameter sizes, order or dtype differ)");

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

void Reducer::open_pass() {
  pass_open_ = true;
  timeline_.clear();
  // A bucket waits for the hooks of its parameters that get a gradient: a frozen one (requires_grad off,
  // train.freeze) fires none, and waiting for it would hold its bucket, and every later one, until finish().
  // Counted here, not once at construction, because parameters are frozen after the reducer is made.
  pending_.assign(buckets_.size(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (size_t i : buckets_[b].params) pending_[b] += params_.params()[i].requires_grad() ? 1 : 0;
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
  Tensor view = params_.grad().narrow(buckets_[b].offset, buckets_[b].numel);
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
  if (!pass_open_) timeline_.clear();  // a pass in which no gradient became ready (e.g. an empty shard)
  while (next_launch_ < buckets_.size()) launch(next_launch_++);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (completed_[b]) continue;
    work_[b].wait();
    record(ReducerEvent::Kind::complete, b);
  }
  reset_pass();
}

}  // namespace luong
