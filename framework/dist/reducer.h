// Reducer: sums the flat gradient buffer over ranks in buckets, overlapping communication with backward.
//
// Buckets are contiguous ranges of FlatParameters::grad() built over the parameters in REVERSE order (the
// last layers' gradients are final first during backward), capped at bucket_mb (the first bucket at
// first_bucket_mb, so communication starts early); a parameter larger than the cap gets a bucket of its
// own. The layout depends only on parameter sizes and which parameters are frozen (below), so it is identical
// on every rank (checked at construction by all-gathering its hash).
//
// Each parameter's gradient-ready hook marks it ready; when every parameter of a bucket is ready, the bucket's
// asynchronous all-reduce is launched at once, in place on the flat buffer. Buckets are launched strictly in
// bucket order (a ready bucket waits for the earlier ones), because every rank must issue its collectives in
// the same order even when hooks fire in a different order. finish() launches whatever is left (buckets
// holding parameters that got no gradient this pass still need their, zero, contribution) and waits for
// everything. Afterwards grad() holds the SUM over ranks; the caller divides by the global token count (see
// token_average.h).
//
// Frozen parameters (requires_grad off when the Reducer is made, as train.freeze makes them; PyTorch DDP
// likewise takes the set at construction) fire no hook, are not waited for, and are not communicated: a
// bucket all-reduces only the range from its first to its last trained parameter, and a bucket of frozen
// parameters alone is never launched (fine-tuning the paper's model with a frozen encoder and source
// embedding sends 37% fewer bytes). Their gradient slots read as zero on every rank. Freezing or unfreezing
// after construction is an error at the next pass: the ranks agreed on the layout, frozen set included, when
// the Reducer was made (the layout hash covers it).
//
// Typical step:
//   flat.zero_grad(); loss.backward(); reducer.finish();
//   auto totals = all_reduce_step_totals(pg, loss_sum, tokens); scale_gradients(flat, totals.tokens);
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/autograd/flat_parameters.h"
#include "framework/dist/process_group.h"

namespace luong {

struct ReducerOptions {
  double bucket_mb = 25.0;       // cap of every bucket but the first, in MiB of gradient (PyTorch DDP's 25)
  double first_bucket_mb = 1.0;  // cap of the first bucket (launched earliest, so kept small)
};

struct GradBucket {
  int64_t offset = 0;          // first element in the flat gradient buffer
  int64_t numel = 0;
  std::vector<size_t> params;  // parameter indices, in reverse parameter order
  // What its all-reduce carries (set by the Reducer): from its first to its last parameter with a gradient;
  // numel 0 when every one of them is frozen (the bucket is never launched).
  FlatSpan reduced;
};

// One entry of the per-pass timeline (steady_clock), for tests and benchmarks that measure overlap.
struct ReducerEvent {
  enum class Kind { hook, launch, complete };
  Kind kind;
  size_t index;  // parameter index for hooks, bucket index otherwise
  std::chrono::steady_clock::time_point time;
};

// Splits parameters of the given element counts into buckets (pure: exposed for tests and benchmarks).
std::vector<GradBucket> plan_buckets(const std::vector<int64_t>& param_numels, size_t element_size,
                                     const ReducerOptions& options);

class Reducer {
 public:
  // Installs a gradient-ready hook on every parameter. `params` and `group` must outlive the Reducer.
  // Collective: every rank must construct its Reducer at the same point.
  Reducer(FlatParameters& params, ProcessGroup& group, ReducerOptions options = {});
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Launches the remaining buckets and waits for all; afterwards grad() holds the sum over ranks.
  // Resets the per-pass state, so the next backward starts a new pass.
  void finish();

  // Off: hooks do nothing and finish() must not be called, so gradients accumulate locally over several
  // backward passes (gradient accumulation); turn it back on before the last pass of the step.
  void set_sync_enabled(bool on);
  bool sync_enabled() const { return sync_enabled_; }

  const std::vector<GradBucket>& buckets() const { return buckets_; }
  uint64_t layout_hash() const { return layout_hash_; }
  // Gradient elements one step's all-reduce carries (the buckets' reduced ranges), and in how many buckets.
  int64_t reduced_numel() const;
  size_t sent_buckets() const;
  // Events of the last (or current) pass, in the order they happened.
  const std::vector<ReducerEvent>& timeline() const { return timeline_; }

 private:
  void on_grad_ready(size_t param);
  void open_pass();  // at a pass's first hook
  void check_frozen_set_unchanged() const;
  void launch_ready_buckets();
  void launch(size_t bucket);
  void poll_in_flight();
  void record(ReducerEvent::Kind kind, size_t index);
  void reset_pass();

  FlatParameters& params_;
  ProcessGroup& group_;
  std::vector<GradBucket> buckets_;
  std::vector<size_t> bucket_of_param_;
  std::vector<char> trained_;              // requires_grad of each parameter when the Reducer was made
  std::vector<size_t> trained_in_bucket_;  // how many hooks each bucket waits for
  uint64_t layout_hash_ = 0;
  bool sync_enabled_ = true;

  // Per-pass state.
  bool pass_open_ = false;
  std::vector<char> param_ready_;
  std::vector<size_t> pending_;  // parameters of each bucket not yet ready
  std::vector<Work> work_;       // one per bucket
  std::vector<char> completed_;  // completion already recorded
  size_t next_launch_ = 0;       // buckets [0, next_launch_) are launched
  std::vector<ReducerEvent> timeline_;
};

}  // namespace luong
