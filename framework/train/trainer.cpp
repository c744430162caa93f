// The Trainer's step loop: training steps, validation, epochs, when to save, and acting on stop requests (the
// signal handlers are in stop_signals.cpp). Resuming and writing checkpoints are in trainer_checkpoints.cpp.
#include "framework/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <span>
#include <thread>

#include "framework/dist/parameter_sync.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/memory/allocator.h"
#include "framework/ops/weight_gemm.h"
#include "framework/optim/average_and_clip.h"

namespace luong {
namespace {

double ppl_of(double loss_sum, int64_t tokens) { return tokens > 0 ? std::exp(loss_sum / tokens) : 0.0; }

// A mean loss per token above log(FLT_MAX) means the target tokens got probabilities below 1e-38: the
// perplexity overflows a float and the model has diverged, even when the loss itself is still finite.
constexpr double kDivergedLossPerToken = 88.72;

bool diverged(double loss_sum, int64_t tokens) {
  return !std::isfinite(loss_sum) || (tokens > 0 && loss_sum / static_cast<double>(tokens) > kDivergedLossPerToken);
}

}  // namespace

int test_delay_ms(const char* variable) {
  const char* value = std::getenv(variable);
  return value ? std::atoi(value) : 0;
}

bool Trainer::stopping() const { return group_.size() > 1 ? stop_agreed_ : stop_requested(); }

Trainer::Trainer(TrainTask& task, Optimizer& optimizer, Schedule& schedule, ProcessGroup& group,
                 TrainerOptions options)
    : task_(task), optimizer_(optimizer), schedule_(schedule), group_(group), opt_(std::move(options)) {
  LUONG_CHECK(opt_.max_steps > 0 || opt_.max_epochs > 0,
              "training needs a limit: set train.max_steps or train.max_epochs (both are 0)");
  if (!opt_.frozen.empty()) {
    frozen_ = std::make_unique<FrozenParameters>(task_.parameters(), opt_.frozen);
    LUONG_CHECK(frozen_->numel() < task_.parameters().numel(), "every parameter is frozen: nothing would train");
  }
  // After the freezing: the reducer leaves frozen gradients out of the all-reduce.
  if (group_.size() > 1)
    reducer_ = std::make_unique<Reducer>(task_.parameters(), group_, ReducerOptions{opt_.bucket_mb});
  if (opt_.ema_decay > 0) ema_ = std::make_unique<ExponentialMovingAverage>(opt_.ema_decay);
}

Trainer::~Trainer() = default;

void Trainer::say(const std::string& text) {
  // Warnings are printed even when quiet; informational messages (validation results, epochs, resume)
  // and the progress line are not.
  if (!is_root()) return;
  if (opt_.quiet && text.rfind("warning:", 0) != 0) return;
  progress_.message(text);
}

void Trainer::check_parameters_across_ranks() {
  if (group_.size() > 1) check_parameters_identical(task_.parameters(), group_);
}

void Trainer::log_train(double grad_norm, double lr) {
  const double now = progress_.elapsed_s();
  const double loss = window_tokens_ ? window_loss_ / static_cast<double>(window_tokens_) : 0.0;
  // Over the window's training time: validation and checkpoint writes inside it are left out, as in the
  // --json summary's rate.
  const double training_s = (now - window_start_s_) - (outside_training_s_ - window_outside_start_s_);
  const double tps = training_s > 0 ? static_cast<double>(window_tokens_) / training_s : 0.0;
  summary_.last_train_loss = loss;
  const MemoryStats mem = allocator_for(task_.parameters().data().device()).stats();
  if (is_root()) {
    int64_t total = opt_.max_steps;
    if (total == 0 && task_.batches_per_epoch() > 0) total = opt_.max_epochs * task_.batches_per_epoch();
    if (!opt_.quiet) progress_.update({task_.epoch(), step_, total, loss, lr, tps, grad_norm});
    metrics_.write({{"type", "train"}, {"step", step_}, {"epoch", task_.epoch()}, {"loss", loss},
                    {"ppl", std::exp(loss)}, {"lr", lr}, {"grad_norm", grad_norm}, {"tokens_per_s", tps},
                    {"elapsed_s", now}, {"mem_allocated", mem.allocated}, {"mem_peak", mem.peak},
                    {"mem_cached", mem.cached}});
  }
  window_loss_ = 0.0, window_tokens_ = 0, window_start_s_ = now, window_outside_start_s_ = outside_training_s_;
}

void Trainer::train_step() {
  FlatParameters& params = task_.parameters();
  params.zero_grad();
  // Gradient accumulation: the parts' gradients sum up locally, and only the last part's backward hands its
  // buckets to the reducer, whose all-reduce then carries the sum of every part (one all-reduce a step).
  StepResult r;
  const int parts = task_.batch_parts();
  // The weights are read-only until the optimizer step: with several parts, each part's products reuse the
  // packed copies the first part made (weight_gemm.h). Measured on Multi30k, batch 32 x 2 parts: +3-4% target
  // tokens/s in three alternating rounds (12,602 / 13,041 / 12,707 against 12,180 / 12,674 / 12,221). Not for
  // one part, which packs each weight once per pass anyway and measured 2-3% slower with the copies held from
  // forward through backward (13,253 / 13,112 / 12,851 against 13,690 / 13,541 / 13,080).
  std::optional<PackedWeightScope> packed_weights;
  if (parts > 1) packed_weights.emplace();
  for (int part = 0; part < parts; ++part) {
    if (reducer_) reducer_->set_sync_enabled(part == parts - 1);
    const StepResult p = task_.forward_backward(part);
    r.loss_sum += p.loss_sum, r.tokens += p.tokens, r.sentences += p.sentences;
  }
  packed_weights.reset();  // before the optimizer writes the weights
  last_step_epoch_ = task_.epoch();
  if (reducer_) reducer_->finish();
  // Token-weighted averaging: the gradient is a sum over this rank's tokens; summing over ranks and
  // dividing by the global token count gives exactly the one-process update on the whole global batch.
  // The same all-reduce carries stop requests: how many processes were signalled, and the sum of their
  // signal numbers (one signal, as a rule: its number is the mean); and whether rank 0's clock says a timed
  // save is due (train.checkpoint_minutes), so that every rank takes part in the same save.
  const bool timed_save_due = is_root() && opt_.checkpoint_minutes > 0 &&
                              progress_.elapsed_s() - last_save_s_ >= 60.0 * opt_.checkpoint_minutes;
  std::vector<double> totals{r.loss_sum, static_cast<double>(r.tokens), stop_requested() ? 1.0 : 0.0,
                             static_cast<double>(stop_signal()), timed_save_due ? 1.0 : 0.0};
  if (group_.size() > 1) group_.all_reduce_scalars(totals);
  const double loss_sum = totals[0];
  const auto tokens = static_cast<int64_t>(totals[1]);
  note_agreed_stop(totals[2], totals[3]);
  timed_save_due_ = totals[4] > 0;
  ++step_;
  // Token average and clip: the norm and the NaN/Inf check from one read of the gradient; the factor is applied
  // by the optimizer's update as it reads the gradient, not by a pass of its own.
  summary_.trained = true;
  // Frozen parameters: no gradient, so their slots are left out of the norm (and never read) as of the update.
  std::span<const FlatSpan> trained;  // empty: every parameter
  if (frozen_) trained = frozen_->trained_spans();
  const AveragedGradient g = diverged(loss_sum, tokens)
                                 ? AveragedGradient{false}
                                 : measure_average_and_clip(params, tokens, opt_.clip_norm, trained);
  if (!g.finite) {
    ++bad_steps_;
    say(str("warning: step ", step_, ": non-finite or diverged loss or gradient (loss sum ", loss_sum, " over ",
            tokens, " tokens); update skipped (", bad_steps_, " in a row)"));
    if (bad_steps_ >= opt_.max_bad_steps) {
      LUONG_FAIL("training stopped: ", bad_steps_,
                 " consecutive steps had a NaN/Inf loss or gradient, or a diverged loss (train.max_bad_steps = ",
                 opt_.max_bad_steps, "); ", checkpoints_kept(), ". Lower optim.lr or set optim.clip_norm.");
    }
    return;
  }
  bad_steps_ = 0;
  const double grad_norm = g.norm;
  const double lr = schedule_.lr(step_, task_.epoch());
  // Frozen parameters: no update, weight decay included.
  optimizer_.step(params, lr, g.factor, trained);
  // Every process averages the same parameters (all-reduced gradients, one update): the averages agree too.
  // Frozen values never change, so their average is their value: only the trained spans are averaged.
  if (ema_) ema_->update(params.data(), trained);
  window_loss_ += loss_sum;
  window_tokens_ += tokens;
  total_tokens_ += tokens;
  if (opt_.log_every > 0 && step_ % opt_.log_every == 0) log_train(grad_norm, lr);
  if (opt_.check_every > 0 && step_ % opt_.check_every == 0) check_parameters_across_ranks();
}

void Trainer::note_agreed_stop(double requests, double signal_sum) {
  if (requests <= 0 || stop_agreed_) return;
  stop_agreed_ = true;
  const double mean = signal_sum / requests;
  agreed_signal_ = mean == std::floor(mean) ? static_cast<int>(mean) : SIGTERM;
  // The signalled process printed its own note if it is rank 0; else rank 0 says why the job stops (a
  // warning, so --quiet shows it too: nothing on rank 0's terminal asked for it).
  if (!stop_requested())
    say(str("warning: ", static_cast<int64_t>(requests), " of the ", group_.size(), " processes received signal ",
            agreed_signal_, ": stopping and saving a checkpoint"));
}

void Trainer::stop_if_requested() {
  if (!stopping()) return;
  stop_ = true;
  summary_.stop_reason = "interrupted (checkpoint saved)";
  summary_.stop_signal = group_.size() > 1 ? agreed_signal_ : stop_signal();
}

// What a run that stops on divergence leaves: said from what it wrote (it may have written nothing yet).
std::string Trainer::checkpoints_kept() const {
  if (opt_.run_dir.empty()) return "no run dir was written";
  if (last_saved_step_ < 0) return str("the run wrote no checkpoint in ", opt_.run_dir);
  return str("the checkpoints in ", opt_.run_dir, " are intact (none was written after step ", last_saved_step_,
             "; best.h5, if any, is the best validated one)");
}

void Trainer::validate(int64_t epoch) {
  if (!task_.has_validation()) {
    pending_valid_epoch_ = -1;  // resumed without a validation set: nothing is owed any more
    return;
  }
  // A stop already agreed on in this step's all-reduce (or requested, with one process) leaves nothing to
  // validate for: the validation is owed at once, with no process spending its share on it.
  ValidationResult v;
  if (!stopping()) {
    if (is_root() && !opt_.quiet) progress_.status(str("validating step ", step_, " ..."));
    const double started = progress_.elapsed_s();
    // A stop request cuts the validation short (a long decode must not hold up the stop's checkpoint, nor run
    // into a scheduler's grace period). LUONG_TEST_VALIDATION_DELAY_MS slows each poll (a batch of the loss
    // pass, a decoding step) down, so that tests can signal a run in the middle of a validation.
    const int delay_ms = test_delay_ms("LUONG_TEST_VALIDATION_DELAY_MS");
    {
      // With optim.ema_decay the average is the model that is validated (and saved as best.h5).
      AveragedWeights averaged(ema_.get(), task_.parameters().data());
      v = task_.validate([delay_ms] {
        if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        return stop_requested();
      });
    }
    outside_training_s_ += progress_.elapsed_s() - started;
    if (group_.size() > 1) {
      // A process may have given up on its share: all of them agree whether the result stands.
      std::vector<double> stop{stop_requested() ? 1.0 : 0.0, static_cast<double>(stop_signal())};
      group_.all_reduce_scalars(stop);
      note_agreed_stop(stop[0], stop[1]);
    }
    LUONG_CHECK(!v.abandoned || stopping(), "validation at step ", step_, " gave up with no stop requested");
  }
  // Interrupted: the result may be partial and is not used. The checkpoint of the stop says this validation
  // is pending, and the resumed run does it first.
  if (stopping()) {
    pending_valid_epoch_ = epoch;
    last_saved_step_ = -1;  // the stop's checkpoint must say so, even where this step was saved before
    say(str("validation at step ", step_, v.abandoned ? " cut short" : " not recorded",
            " by the stop; a resumed run does it first"));
    return;
  }
  pending_valid_epoch_ = -1;
  last_valid_step_ = step_;
  const double ppl = ppl_of(v.loss_sum, v.tokens);
  summary_.last_valid_ppl = ppl;
  summary_.last_valid_extra = v.extra;
  if (std::isfinite(ppl) && (best_valid_ppl_ == 0.0 || ppl < best_valid_ppl_)) best_valid_ppl_ = ppl;
  double score = ppl;
  if (opt_.valid_metric != "valid_ppl") {
    const auto it = v.extra.find(opt_.valid_metric);
    LUONG_CHECK(it != v.extra.end(), "validation did not compute ", opt_.valid_metric,
                ", the metric that picks the best checkpoint");
    score = it->second;
  }
  const bool higher = opt_.valid_metric_higher_is_better;
  schedule_.on_validation(higher ? -score : score);  // the schedule takes lower as better
  // A NaN (a diverged model's perplexity) is never an improvement: the run stops on it below.
  const bool improved =
      std::isfinite(score) && (!has_best_score_ || (higher ? score > best_valid_score_ : score < best_valid_score_));
  if (improved) {
    best_valid_score_ = score;
    has_best_score_ = true;
    bad_validations_ = 0;
  } else {
    ++bad_validations_;
  }
  const bool by_ppl = opt_.valid_metric == "valid_ppl";
  std::string line = str("validation at step ", step_, ": ppl ", ppl, improved && by_ppl ? " (best)" : "", "  loss ",
                         v.tokens ? v.loss_sum / static_cast<double>(v.tokens) : 0.0);
  for (const auto& [k, val] : v.extra) {  // scores such as BLEU, with sacreBLEU's two decimals
    char value[32];
    std::snprintf(value, sizeof value, "%.2f", val);
    line += str("  ", metric_setting(k), " ", value, improved && k == opt_.valid_metric ? " (best)" : "");
  }
  say(line);
  if (is_root()) {
    nlohmann::json rec{{"type", "valid"},
                       {"step", step_},
                       {"epoch", epoch},
                       {"valid_loss", v.tokens ? v.loss_sum / static_cast<double>(v.tokens) : 0.0},
                       {"valid_ppl", ppl},
                       {"best_valid_ppl", best_valid_ppl_},
                       {"elapsed_s", progress_.elapsed_s()}};
    for (const auto& [k, val] : v.extra) rec[k] = val;
    if (!by_ppl) rec["best_" + opt_.valid_metric] = best_valid_score_;
    metrics_.write(rec);
  }
  if (diverged(v.loss_sum, v.tokens))
    LUONG_FAIL("training diverged: validation perplexity ", ppl, " at step ", step_, " (loss ", v.loss_sum, " over ",
               v.tokens, " tokens): nothing was saved for this step, and ", checkpoints_kept(),
               ". Lower optim.lr or set optim.clip_norm.");
  if (opt_.checkpoint_every == 0 || improved || last_saved_step_ == step_) {
    // Saved again even if this step was saved before validating (an epoch's or the run's last step): the
    // checkpoint must hold the validation's outcome (best perplexity, patience, schedule) for an exact
    // resume.
    last_saved_step_ = -1;
    save_checkpoint_now(improved);
  }
  if (opt_.early_stopping > 0 && bad_validations_ >= opt_.early_stopping) {
    stop_ = true;
    summary_.stop_reason = str("early stopping: no improvement in ", bad_validations_, " validations");
  }
}

void Trainer::end_epoch() {
  ++epochs_completed_;
  schedule_.on_epoch_end(epochs_completed_);
  say(str("epoch ", epochs_completed_, " done at step ", step_));
  // Not again for a step already validated: a run that stopped at its last step (train.max_steps) validated
  // it before ending, and resumed with a higher limit it ends the epoch here; a second validation of the
  // same parameters counted as "no improvement" for the plateau schedule and early stopping.
  if (opt_.valid_every == 0 && last_valid_step_ != step_) validate(epochs_completed_);
  if (opt_.max_epochs > 0 && epochs_completed_ >= opt_.max_epochs) {
    stop_ = true;
    summary_.stop_reason = str("reached train.max_epochs = ", opt_.max_epochs);
  }
}

TrainSummary Trainer::run() {
  if (is_root() && !opt_.run_dir.empty()) {
    std::filesystem::create_directories(opt_.run_dir);
    for (const std::string& f : remove_stale_temp_files(opt_.run_dir))
      say("removed " + f + " (left by an interrupted save)");
  }
  resume();
  if (frozen_) {
    say(str("frozen: ", frozen_->numel(), " of the ", task_.parameters().numel(),
            " parameter values stay as they are (backward computes no gradient for them, ",
            reducer_ ? "the all-reduce does not carry them, " : "", "the optimizer does not update them)"));
  }
  if (reducer_) {
    // What each step sends, once: a user sizing dist.bucket_mb or a network sees it without a profiler.
    const double bytes = static_cast<double>(reducer_->reduced_numel()) *
                         static_cast<double>(dtype_size(task_.parameters().grad().dtype()));
    say(str("gradient all-reduce: ", std::round(bytes / 1e5) / 10, " MB a step over ", group_.size(), " processes, in ",
            reducer_->sent_buckets(), " bucket(s) of up to dist.bucket_mb = ", opt_.bucket_mb,
            " MiB started during backward"));
  }
  if (ema_)
    say(str("keeping an exponential moving average of the parameters (optim.ema_decay ", opt_.ema_decay,
            "): the validations measure it, and best.h5 and every checkpoint's model are the average"));
  if (is_root() && opt_.on_started) opt_.on_started();
  window_start_s_ = progress_.elapsed_s(), window_outside_start_s_ = outside_training_s_;
  last_save_s_ = progress_.elapsed_s();
  // A resumed run that had already ended stays ended, for the reason it ended: its limits, or early
  // stopping (whose patience the checkpoint keeps; resuming used to train on past it and replace best.h5,
  // so an interrupted sweep re-entering a finished trial got another result than an uninterrupted one).
  if (opt_.max_epochs > 0 && epochs_completed_ >= opt_.max_epochs)
    stop_ = true, summary_.stop_reason = str("already done (train.max_epochs = ", opt_.max_epochs, " reached)");
  if (opt_.max_steps > 0 && step_ >= opt_.max_steps)
    stop_ = true, summary_.stop_reason = str("already done (train.max_steps = ", opt_.max_steps, " reached)");
  if (pending_valid_epoch_ >= 0 && task_.has_validation()) {
    // The validation a stop cut short comes first, even when a limit is already reached: it is part of the run
    // (its record, best.h5, the patience), and its outcome may end the run (early stopping).
    say(str("validating step ", step_, " first: a stop cut its validation short"));
    validate(pending_valid_epoch_);
    stop_if_requested();
  }
  // (Not when the owed validation just stopped the run, by early stopping or by another stop request.)
  const bool just_stopped = stopping() || summary_.stop_reason.rfind("early stopping", 0) == 0;
  if (!just_stopped && opt_.early_stopping > 0 && bad_validations_ >= opt_.early_stopping && step_ > 0)
    stop_ = true, summary_.stop_reason = str("already done (early stopping: no improvement in ", bad_validations_,
                                             " validations; raise train.early_stopping to train on)");

  while (!stop_) {
    if (!task_.next_batch()) {
      end_epoch();  // its validation may be cut short by a stop: no step is trained after that
      stop_if_requested();
      continue;
    }
    train_step();
    if (opt_.valid_every > 0 && step_ % opt_.valid_every == 0) validate(task_.epoch());
    if (opt_.checkpoint_every > 0 && step_ % opt_.checkpoint_every == 0) save_checkpoint_now();
    if (timed_save_due_) save_checkpoint_now();  // (nothing when this step was just saved)
    if (opt_.max_steps > 0 && step_ >= opt_.max_steps) {
      stop_ = true;
      summary_.stop_reason = str("reached train.max_steps = ", opt_.max_steps);
    }
    stop_if_requested();
  }
  // The end of the run: a final validation when the last one is stale, and a final checkpoint.
  if (last_valid_step_ != step_ && step_ > 0 && summary_.stop_reason.rfind("early", 0) != 0 && !stopping()) {
    validate(last_step_epoch_ > 0 ? last_step_epoch_ : task_.epoch());
    stop_if_requested();  // cut short by a stop: the run is interrupted, its last validation still to do
  }
  save_checkpoint_now();
  summary_.steps = step_;
  summary_.epochs_completed = epochs_completed_;
  summary_.best_valid_ppl = best_valid_ppl_;
  summary_.valid_metric = opt_.valid_metric;
  if (has_best_score_) summary_.best_valid_score = best_valid_score_;
  if (window_tokens_ > 0) summary_.last_train_loss = window_loss_ / static_cast<double>(window_tokens_);
  summary_.elapsed_s = progress_.elapsed_s();
  const double training_s = summary_.elapsed_s - outside_training_s_;
  summary_.tokens_per_s = training_s > 0 ? static_cast<double>(total_tokens_) / training_s : 0.0;
  say("training finished: " + summary_.stop_reason);
  return summary_;
}

}  // namespace luong
