// The generic training loop: steps, gradient synchronisation across ranks, token-weighted averaging,
// non-finite-loss handling, clipping, the optimizer and its schedule, validation and early stopping,
// atomic HDF5 checkpoints with retention, exact resume, the progress line and metrics.jsonl.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/dist/process_group.h"
#include "framework/dist/reducer.h"
#include "framework/io/checkpoint.h"
#include "framework/optim/frozen_parameters.h"
#include "framework/optim/optimizer.h"
#include "framework/optim/schedule.h"
#include "framework/optim/weight_average.h"
#include "framework/train/metrics_log.h"
#include "framework/train/progress.h"
#include "framework/train/resume_point.h"
#include "framework/train/stop_signals.h"  // the trainer acts on them; callers install them
#include "framework/train/train_task.h"

namespace luong {

// The milliseconds of a LUONG_TEST_*_DELAY_MS variable (0 when unset): tests slow a checkpoint's write or a
// validation's polls down with them, so that a signal or a kill lands in the middle.
int test_delay_ms(const char* variable);

struct TrainerOptions {
  std::string run_dir;            // checkpoints, metrics.jsonl; "" = none written
  int64_t max_steps = 0;          // 0 = no limit
  int64_t max_epochs = 0;         // 0 = no limit (at least one of the two must be set)
  int64_t valid_every = 0;        // steps; 0 = at each epoch end
  int64_t log_every = 50;
  int64_t checkpoint_every = 0;   // steps; 0 = after each validation
  double checkpoint_minutes = 0;  // also save when this much wall time has passed since the last save; 0 = off
  int64_t keep_checkpoints = 3;   // 0 = keep all
  bool tensorboard = false;       // also write metrics.jsonl's records as TensorBoard scalars in run_dir
  int64_t early_stopping = 0;     // validations without improvement; 0 = off
  int64_t max_bad_steps = 5;      // consecutive non-finite losses before stopping
  double clip_norm = 5.0;         // 0 = off
  // > 0: keep an exponential moving average of the parameters with this decay (optim/weight_average.h), and
  // validate and save it (a checkpoint's model/ holds the average; ema/training_params the parameters the
  // optimizer continues from). 0 = off.
  double ema_decay = 0.0;
  // Indices into the task's parameters that training leaves exactly as they are (optim/frozen_parameters.h).
  std::vector<size_t> frozen;
  double bucket_mb = 25.0;
  int64_t check_every = 0;        // steps between cross-rank parameter checks; 0 = off
  std::string resume;             // "" (fresh), "auto" (newest valid checkpoint in run_dir), or a path
  // find_resume_point(resume, run_dir, ...) when the caller has already called it (to build its task from the
  // checkpoint); unset, the trainer calls it.
  std::optional<ResumePoint> resume_point;
  // The validation result that picks best.h5 and drives early stopping and the schedule's on_validation:
  // "valid_ppl" (the perplexity, lower is better), or a key of ValidationResult::extra that the task computes
  // at every validation ("valid_bleu", higher is better). A run resumes only with the metric it started with.
  std::string valid_metric = "valid_ppl";
  bool valid_metric_higher_is_better = false;
  bool quiet = false;             // no progress line and no informational messages (warnings still show)
  std::map<std::string, std::string> checkpoint_strings;  // stored verbatim in every checkpoint ("config")
  // Called on rank 0 once the run has started or resumed (a failed resume writes nothing): the caller
  // writes the run directory's metadata (config.yaml, vocabularies) there.
  std::function<void()> on_started;
  // Given the "config" string of the checkpoint a run resumes from and the number of processes that wrote
  // it, the differences from this run's config, one "key: old -> new" per entry; changes that keep the
  // resumed steps identical to an uninterrupted run (limits, logging) come back prefixed with "=". Unset:
  // no comparison.
  std::function<std::vector<std::string>(const std::string& saved_config, int64_t saved_world_size)> config_changes;
};

// A validation metric's config name: "valid_bleu" -> "bleu" (train.valid_metric's values, the validation line).
inline std::string metric_setting(const std::string& key) { return key.rfind("valid_", 0) == 0 ? key.substr(6) : key; }

struct TrainSummary {
  int64_t steps = 0;
  int64_t epochs_completed = 0;
  double best_valid_ppl = 0.0;  // 0 when never validated
  double last_valid_ppl = 0.0;
  std::string valid_metric;                        // TrainerOptions::valid_metric
  std::optional<double> best_valid_score;          // of valid_metric: the validation best.h5 holds
  std::map<std::string, double> last_valid_extra;  // the last validation's further metrics ("valid_bleu")
  double last_train_loss = 0.0;  // per token, over the steps since the last log line (or the last window)
  bool trained = false;          // at least one step ran in this process (else last_train_loss means nothing)
  double tokens_per_s = 0.0;     // over the time spent training, validation and checkpoints excluded
  double elapsed_s = 0.0;
  std::string stop_reason;
  std::string resumed_from;  // checkpoint path, or ""
  // The signal that stopped the run (SIGINT, SIGTERM), or 0. Under mpirun every process reports the
  // signal even when only one of them received it: the processes agree to stop at the same step.
  int stop_signal = 0;
};

class Trainer {
 public:
  Trainer(TrainTask& task, Optimizer& optimizer, Schedule& schedule, ProcessGroup& group, TrainerOptions options);
  ~Trainer();
  TrainSummary run();

 private:
  void resume();
  void train_step();
  // `epoch` labels the metrics record: the epoch the validated step belongs to (at an epoch's end the data
  // iterator has already moved on to the next one).
  void validate(int64_t epoch);
  void end_epoch();
  void save_checkpoint_now(bool best = false);
  // Refuses a resume that would branch the run (see trainer.cpp) and moves aside the later files that
  // --resume auto skipped.
  void check_no_later_checkpoints(const std::string& resumed_from);
  std::string checkpoints_kept() const;
  std::vector<std::string> skipped_on_resume_;  // the files --resume auto skipped, newest first
  // The resolved config's differences from the one a checkpoint was trained with (TrainerOptions::
  // config_changes): keys that keep the run's steps the same (limits, logging, another form of the same
  // global batch) and the others.
  struct ConfigChanges {
    std::vector<std::string> same_steps, others;  // "section.key: old -> new"
  };
  ConfigChanges config_changes_since(const Checkpoint& ckpt) const;
  // Fails on every process unless all of them found the same checkpoint step (or none); `error` is this
  // process's failure to find or read its checkpoint (null if none), rethrown here.
  void agree_on_resume(const std::optional<Checkpoint>& ckpt, const std::exception_ptr& error);
  void warn_about_config_changes(const Checkpoint& ckpt);
  void check_parameters_across_ranks();
  // After a checkpoint's model/ is loaded into the parameters: a checkpoint written with an average holds it
  // there, and the training parameters in ema/; puts each where it belongs (and drops the average when this
  // run keeps none).
  void restore_average(const StateDict& s, const std::string& path);
  void log_train(double grad_norm, double lr);
  void say(const std::string& text);
  bool is_root() const { return group_.rank() == 0; }

  TrainTask& task_;
  Optimizer& optimizer_;
  Schedule& schedule_;
  ProcessGroup& group_;
  TrainerOptions opt_;
  std::unique_ptr<Reducer> reducer_;
  std::unique_ptr<ExponentialMovingAverage> ema_;  // null without TrainerOptions::ema_decay
  std::unique_ptr<FrozenParameters> frozen_;       // null without TrainerOptions::frozen
  ProgressLine progress_;
  MetricsLog metrics_;

  // Training state saved in checkpoints (under "trainer/").
  int64_t step_ = 0;
  int64_t epochs_completed_ = 0;
  double best_valid_ppl_ = 0.0;    // the lowest validation perplexity, 0 before the first validation
  double best_valid_score_ = 0.0;  // of opt_.valid_metric, when has_best_score_
  bool has_best_score_ = false;
  int64_t bad_validations_ = 0;
  int64_t bad_steps_ = 0;
  int64_t last_saved_step_ = -1;
  double last_save_s_ = 0;       // progress_.elapsed_s() at the last save (or the start): train.checkpoint_minutes
  bool timed_save_due_ = false;  // agreed in the step's all-reduce: rank 0's clock says a timed save is due
  int64_t last_valid_step_ = -1;
  int64_t last_step_epoch_ = 0;  // the epoch of the last step this process took (0: none yet)
  // The epoch of step_'s validation when a stop cut it short (-1: none): saved, and a resumed run does that
  // validation before anything else, as the uninterrupted run did.
  int64_t pending_valid_epoch_ = -1;

  // Window statistics for the progress line (not saved).
  double window_loss_ = 0.0;
  int64_t window_tokens_ = 0;
  double window_start_s_ = 0.0;
  double window_outside_start_s_ = 0.0;  // outside_training_s_ when the log window began
  int64_t total_tokens_ = 0;
  double outside_training_s_ = 0.0;  // validation and checkpoint time, left out of the throughput
  TrainSummary summary_;
  bool stop_ = false;
  // With several processes a signal may reach only one of them (a scheduler, a user's kill): each step's
  // all-reduce carries the request, and every process acts on the agreed value only, never on its own
  // flag, so all of them stop after the same step and take part in the same final save.
  bool stop_agreed_ = false;
  int agreed_signal_ = 0;
  bool stopping() const;
  // Acts on the all-reduced stop requests: `requests` processes were signalled, their signal numbers summing
  // to `signal_sum`.
  void note_agreed_stop(double requests, double signal_sum);
  // Ends the loop if a stop was requested (agreed on, with several processes): reason and signal for the summary.
  void stop_if_requested();
};

}  // namespace luong
