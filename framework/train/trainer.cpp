#include "framework/train/trainer.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "framework/dist/checksum.h"
#include "framework/dist/parameter_sync.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/memory/allocator.h"
#include "framework/ops/tensor_math.h"
#include "framework/optim/average_and_clip.h"

namespace luong {
namespace {

std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_signal_notes{true};

void note(const char* text, size_t length) {
  if (!g_signal_notes.load()) return;
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, text, length);
}

// Async-signal-safe: atomics, write(2) and _exit(2) only.
void on_stop_signal(int sig) {
  int expected = 0;
  if (!g_stop_signal.compare_exchange_strong(expected, sig)) {  // the second signal
    static const char kNow[] = "\nluong: stopping now (the last checkpoint written is intact)\n";
    note(kNow, sizeof(kNow) - 1);
    _exit(128 + sig);
  }
  static const char kNote[] =
      "\nluong: stopping after the current step, then saving a checkpoint (signal again to stop at once)\n";
  note(kNote, sizeof(kNote) - 1);
}

double ppl_of(double loss_sum, int64_t tokens) { return tokens > 0 ? std::exp(loss_sum / tokens) : 0.0; }

// A mean loss per token above log(FLT_MAX) means the target tokens got probabilities below 1e-38: the
// perplexity overflows a float and the model has diverged, even when the loss itself is still finite.
constexpr double kDivergedLossPerToken = 88.72;

bool diverged(double loss_sum, int64_t tokens) {
  return !std::isfinite(loss_sum) || (tokens > 0 && loss_sum / static_cast<double>(tokens) > kDivergedLossPerToken);
}

// A loader's message about the checkpoint at `path`, naming the path once: the reader's messages start
// with "checkpoint <path>: ...", those of the task, optimizer or iterator do not.
std::string about_checkpoint(const std::string& path, const std::string& what) {
  return what.find(path) != std::string::npos ? what : "checkpoint " + path + ": " + what;
}

std::string skipped_message(const std::string& path, const std::string& reason) {
  return "warning: skipping " + about_checkpoint(path, reason);
}

// The first floating-point tensor of `state` that holds a NaN or an infinity, or "" when there is none.
std::string first_non_finite(const StateDict& state) {
  for (const auto& [name, t] : state.tensors)
    if ((t.dtype() == DType::f32 || t.dtype() == DType::f64) && !std::isfinite(sum_squares(t))) return name;
  return "";
}

}  // namespace

void install_stop_signal_handlers(bool notes) {
  g_signal_notes.store(notes);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}
bool stop_requested() { return g_stop_signal.load() != 0; }
int stop_signal() { return g_stop_signal.load(); }

bool Trainer::stopping() const { return group_.size() > 1 ? stop_agreed_ : stop_requested(); }

Trainer::Trainer(TrainTask& task, Optimizer& optimizer, Schedule& schedule, ProcessGroup& group,
                 TrainerOptions options)
    : task_(task), optimizer_(optimizer), schedule_(schedule), group_(group), opt_(std::move(options)) {
  LUONG_CHECK(opt_.max_steps > 0 || opt_.max_epochs > 0,
              "training needs a limit: set train.max_steps or train.max_epochs (both are 0)");
  if (group_.size() > 1) reducer_ = std::make_unique<Reducer>(task_.parameters(), group_, ReducerOptions{opt_.bucket_mb});
}

Trainer::~Trainer() = default;

void Trainer::say(const std::string& text) {
  // Warnings are printed even when quiet; informational messages (validation results, epochs, resume)
  // and the progress line are not.
  if (!is_root()) return;
  if (opt_.quiet && text.rfind("warning:", 0) != 0) return;
  progress_.message(text);
}

std::optional<Checkpoint> Trainer::checkpoint_to_resume() {
  if (opt_.resume.empty()) return std::nullopt;
  if (opt_.resume != "auto") return load_checkpoint(opt_.resume);  // an explicit path must load: errors propagate
  // A checkpoint that loads but holds only a model (luong average's output saved as ckpt-<step>.h5) cannot be
  // resumed: skipped like a damaged one, so that the run continues from the newest that can.
  LatestCheckpoint latest = find_latest_valid(opt_.run_dir, [](const Checkpoint& c) {
    return c.state.ints.contains("trainer/step") ? std::string()
                                                 : "it has no trainer state (an averaged or exported model)";
  });
  for (const auto& s : latest.skipped) {
    say(skipped_message(s.path, s.reason));
    skipped_on_resume_.push_back(s.path);
  }
  if (latest.checkpoint) return std::move(latest.checkpoint);
  if (latest.skipped.empty()) return std::nullopt;  // nothing saved yet: a fresh start
  // Step checkpoints exist but none loads. Starting over would overwrite the run's history (and best.h5):
  // resume from best.h5 if that loads, else stop and let the user decide.
  const std::string best = best_checkpoint_path(opt_.run_dir);
  if (std::filesystem::exists(best)) {
    try {
      Checkpoint c = load_checkpoint(best);
      say("warning: no step checkpoint in " + opt_.run_dir + " loads; resuming from " + best);
      return c;
    } catch (const Error& e) {
      say(skipped_message(best, e.what()));
    }
  }
  std::string names;
  for (const auto& s : latest.skipped) names += (names.empty() ? "" : ", ") + s.path;
  LUONG_FAIL("--resume auto: ", opt_.run_dir, " holds checkpoints but none loads (", names,
             "; reasons above). Move them away to start this run over, or resume from a checkpoint path.");
}

Trainer::ConfigChanges Trainer::config_changes_since(const Checkpoint& ckpt) const {
  ConfigChanges out;
  const auto saved = ckpt.state.strings.find("config");
  if (!opt_.config_changes || saved == ckpt.state.strings.end()) return out;
  const auto world = ckpt.metadata.find("world_size");
  const int64_t saved_world = world == ckpt.metadata.end() ? group_.size() : std::stoll(world->second);
  for (const std::string& c : opt_.config_changes(saved->second, saved_world)) {
    if (!c.empty() && c[0] == '=') {
      out.limits.push_back(c.substr(1));
    } else {
      out.others.push_back(c);
    }
  }
  return out;
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

void Trainer::warn_about_config_changes(const Checkpoint& ckpt) {
  const ConfigChanges c = config_changes_since(ckpt);
  if (!c.limits.empty()) say("resuming with changed limits: " + joined(c.limits));
  if (!c.others.empty())
    say("warning: resuming with a changed config (the run is no longer the same as an uninterrupted one): " +
        joined(c.others));
}

// Every process must resume from the same step. A rank that cannot see the run directory (node-local
// storage on a multi-node job) used to start over while the others resumed, and the first collective then
// hung until the watchdog; a rank that failed to read its checkpoint left the others waiting likewise. One
// all-reduce of each rank's finding, then every rank fails with the same explanation, or none does.
void Trainer::agree_on_resume(const std::optional<Checkpoint>& ckpt, const std::exception_ptr& error) {
  const int world = group_.size(), rank = group_.rank();
  constexpr int64_t kFailed = -1, kFresh = 0, kNoStep = -2;  // else the checkpoint's step + 1
  std::vector<int64_t> found(static_cast<size_t>(world), 0);
  int64_t mine = kFresh;
  if (error) {
    mine = kFailed;
  } else if (ckpt) {
    const auto step = ckpt->state.ints.find("trainer/step");
    mine = step == ckpt->state.ints.end() ? kNoStep : step->second + 1;
  }
  found[static_cast<size_t>(rank)] = mine;
  group_.all_reduce_scalars(found);
  if (error) std::rethrow_exception(error);
  std::string failed, each;
  bool agree = true;
  for (int r = 0; r < world; ++r) {
    const int64_t f = found[static_cast<size_t>(r)];
    if (f == kFailed) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
    agree = agree && f == found[0];
    each += str(r == 0 ? "" : ", ", "rank ", r, ": ",
                f == kFailed   ? std::string("cannot read its checkpoint")
                : f == kFresh  ? std::string("no checkpoint")
                : f == kNoStep ? std::string("a checkpoint without a step")
                               : str("step ", f - 1));
  }
  if (!failed.empty())
    LUONG_FAIL("cannot resume: rank(s) ", failed, " could not read their checkpoint (that process printed why)");
  if (!agree)
    LUONG_FAIL("the processes disagree on where to resume (", each, "): every process must see the same run ",
               "directory ", opt_.run_dir, " (a shared file system) and the same --resume");
}

// Step checkpoints after the one resumed from are either another branch of this run (resumed here from an
// earlier checkpoint by path) or files --resume auto could not use. Retention keeps the highest steps, so it
// would delete this run's new checkpoints in their favour, and the next --resume auto would continue from
// them. A branch is refused; the skipped files are renamed <name>.skipped (kept, out of the listing).
void Trainer::check_no_later_checkpoints(const std::string& resumed_from) {
  if (opt_.run_dir.empty()) return;
  std::string branch;
  for (const CheckpointFile& f : list_checkpoints(opt_.run_dir)) {
    if (f.step <= step_ || f.path == resumed_from) continue;
    if (std::find(skipped_on_resume_.begin(), skipped_on_resume_.end(), f.path) == skipped_on_resume_.end()) {
      branch += (branch.empty() ? "" : ", ") + f.path;
      continue;
    }
    // A free name: an earlier .skipped file stays as it was.
    std::string aside = f.path + ".skipped";
    std::error_code ec;
    for (int n = 2; std::filesystem::exists(std::filesystem::symlink_status(aside, ec)); ++n)
      aside = str(f.path, ".skipped.", n);
    if (std::rename(f.path.c_str(), aside.c_str()) == 0) {
      say(str("warning: moved ", f.path, " (skipped above) to ", aside,
              ": left in place it would outrank this run's new checkpoints"));
    } else if (const int err = errno; std::filesystem::exists(std::filesystem::symlink_status(f.path, ec))) {
      // Still there (not moved by another rank): retention would delete this run's checkpoints in its favour.
      LUONG_FAIL("cannot move ", f.path, " (skipped above) out of the way to ", aside, ": ", std::strerror(err),
                 "; move it away by hand and resume again");
    }
  }
  if (!branch.empty())
    LUONG_FAIL("--run-dir ", opt_.run_dir, " holds checkpoints after step ", step_, " (", branch, "): resuming from ",
               resumed_from, " here would branch the run, and keeping the newest checkpoints would then delete this ",
               "run's in their favour. Resume the newest with --resume auto, move the later ones away, or resume into ",
               "another --run-dir");
}

void Trainer::resume() {
  std::optional<Checkpoint> ckpt;
  if (group_.size() == 1) {
    ckpt = checkpoint_to_resume();
  } else {
    std::exception_ptr error;
    try {
      ckpt = checkpoint_to_resume();
    } catch (const Error&) {
      error = std::current_exception();
    }
    agree_on_resume(ckpt, error);
  }
  if (!ckpt) {
    // A fresh run: every rank starts from rank 0's parameters.
    if (group_.size() > 1) broadcast_parameters(task_.parameters(), group_);
    if (is_root() && !opt_.run_dir.empty()) metrics_.open(opt_.run_dir + "/metrics.jsonl", 0);
    return;
  }
  const StateDict& s = ckpt->state;
  const auto world = ckpt->metadata.find("world_size");
  const std::string saved_world = world == ckpt->metadata.end() ? "" : world->second;
  try {
    task_.load_state(s, ckpt->path);
    optimizer_.load_state(s.sub("optim"));
    optimizer_.fit_state_to(task_.parameters());
    schedule_.load_state(s.sub("schedule"));
    const StateDict t = s.sub("trainer");
    step_ = t.ints.at("step");
    epochs_completed_ = t.ints.at("epochs_completed");
    bad_validations_ = t.ints.at("bad_validations");
    bad_steps_ = t.ints.at("bad_steps");
    best_valid_ppl_ = t.floats.at("best_valid_ppl");
  } catch (const std::out_of_range&) {
    LUONG_FAIL("cannot resume from ", ckpt->path, ": it has no trainer state (an averaged or exported model, not a ",
               "training checkpoint)");
  } catch (const Error& e) {
    const bool other_world = !saved_world.empty() && saved_world != std::to_string(group_.size());
    // The config keys that differ from the checkpoint's usually say why (model.layers: 2 -> 1): those that
    // shape what is loaded (the model, the vocabularies, the optimizer), not paths or rates.
    std::vector<std::string> shaping;
    for (const std::string& c : config_changes_since(*ckpt).others) {
      static const char* const kShaping[] = {"model.",
                                             "optim.name:",
                                             "data.src_vocab_size:",
                                             "data.tgt_vocab_size:",
                                             "data.min_freq:",
                                             "data.lowercase:",
                                             "data.max_len:",
                                             "data.pool_batches:",
                                             "train.batch_size:",
                                             "train.batch_by:"};  // the model, vocabularies, optimizer, data position
      bool shapes_state = false;
      for (const char* k : kShaping) shapes_state = shapes_state || c.rfind(k, 0) == 0;
      if (shapes_state) shaping.push_back(c);
    }
    const std::string changed = joined(shaping);
    LUONG_FAIL("cannot resume from ", about_checkpoint(ckpt->path, e.what()),
               other_world ? str(" (it was written by ", saved_world, " process(es), this run has ", group_.size(), ")")
                           : std::string(),
               changed.empty() ? std::string() : "; the config differs from the checkpoint's: " + changed);
  }
  LUONG_CHECK(step_ >= 0 && epochs_completed_ >= 0, "cannot resume from ", ckpt->path, ": invalid trainer state (step ",
              step_, ", epochs ", epochs_completed_, ")");
  // 0 means "not validated yet"; a NaN would make every later validation "no improvement" (no best.h5 again).
  LUONG_CHECK(std::isfinite(best_valid_ppl_) && best_valid_ppl_ >= 0.0, "cannot resume from ", ckpt->path,
              ": invalid trainer state (best validation perplexity ", best_valid_ppl_, ")");
  // The same step is not the same checkpoint: stale node-local copies, or another --run-dir or --resume
  // on some rank, would train replicas that differ from the first step on, with nothing to notice it.
  if (group_.size() > 1)
    check_same_on_all_ranks(group_, tensor_checksum(task_.parameters().data()),
                            str("the processes resumed from different checkpoints (rank ", group_.rank(), " loaded ",
                                ckpt->path, "); every process must resume from the same file"));
  last_saved_step_ = step_;
  // Whether the checkpointed step's validation had run: a checkpoint written at the last step of an epoch
  // precedes the epoch's validation, which the resumed run must then do (once). Older checkpoints do not
  // say; their step's validation, if due, is taken as done.
  const auto saved_valid = s.ints.find("trainer/last_valid_step");
  last_valid_step_ = saved_valid != s.ints.end() ? saved_valid->second : step_;
  check_no_later_checkpoints(ckpt->path);  // before metrics.jsonl is cut back to this step
  summary_.resumed_from = ckpt->path;
  say("resumed from " + ckpt->path + " at step " + std::to_string(step_));
  warn_about_config_changes(*ckpt);
  if (is_root() && !opt_.run_dir.empty()) metrics_.open(opt_.run_dir + "/metrics.jsonl", step_, last_valid_step_);
}

void Trainer::save_checkpoint_now(bool best) {
  if (opt_.run_dir.empty() || last_saved_step_ == step_) return;
  if (bad_steps_ > 0) {  // the last step was skipped as diverged: its parameters are not worth keeping
    say(str("warning: no checkpoint at step ", step_, ": its loss was not finite"));
    return;
  }
  const auto started = progress_.elapsed_s();
  // Every rank takes part in gathering state (collectives inside the task are allowed); rank 0 writes.
  StateDict state;
  StateDict part;
  task_.save_state(part);
  state.merge(part, "");  // the task's entries (model/, data/, vocab/) sit at the root
  part = {};
  optimizer_.state_view(part);  // written below, before any further step
  state.merge(part, "optim");
  part = {};
  schedule_.state(part);
  state.merge(part, "schedule");
  state.ints["trainer/step"] = step_;
  state.ints["trainer/epochs_completed"] = epochs_completed_;
  state.ints["trainer/bad_validations"] = bad_validations_;
  state.ints["trainer/bad_steps"] = bad_steps_;
  state.ints["trainer/last_valid_step"] = last_valid_step_;
  state.floats["trainer/best_valid_ppl"] = best_valid_ppl_;
  for (const auto& [k, v] : opt_.checkpoint_strings) state.strings[k] = v;
  last_saved_step_ = step_;
  if (!is_root()) return;
  // Never write NaN or infinite weights or optimizer state: such a file would rotate good checkpoints out
  // and could become best.h5 or the one --resume auto picks.
  if (const std::string bad = first_non_finite(state); !bad.empty()) {
    say(str("warning: no checkpoint at step ", step_, ": '", bad, "' holds NaN or infinite values"));
    return;
  }
  auto meta = task_.checkpoint_metadata();
  meta["world_size"] = std::to_string(group_.size());
  // LUONG_TEST_CHECKPOINT_DELAY_MS slows every entry of a write down, so tests can kill a run in the middle
  // of one (the crash-safety guarantee is that the previous checkpoint survives).
  CheckpointEntryHook hook;
  if (const char* d = std::getenv("LUONG_TEST_CHECKPOINT_DELAY_MS")) {
    const int ms = std::atoi(d);
    hook = [ms](const std::string&) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  }
  save_checkpoint(checkpoint_path(opt_.run_dir, step_), state, meta, hook);
  if (best) mark_best(opt_.run_dir, step_);  // only right after the validation that improved, at its step
  if (opt_.keep_checkpoints > 0) apply_retention(opt_.run_dir, opt_.keep_checkpoints);
  outside_training_s_ += progress_.elapsed_s() - started;
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
  const StepResult r = task_.forward_backward();
  last_step_epoch_ = task_.epoch();
  if (reducer_) reducer_->finish();
  // Token-weighted averaging: the gradient is a sum over this rank's tokens; summing over ranks and
  // dividing by the global token count gives exactly the one-process update on the whole global batch.
  // The same all-reduce carries stop requests: how many processes were signalled, and the sum of their
  // signal numbers (one signal, as a rule: its number is the mean).
  std::vector<double> totals{r.loss_sum, static_cast<double>(r.tokens), stop_requested() ? 1.0 : 0.0,
                             static_cast<double>(stop_signal())};
  if (group_.size() > 1) group_.all_reduce_scalars(totals);
  const double loss_sum = totals[0];
  const auto tokens = static_cast<int64_t>(totals[1]);
  if (totals[2] > 0 && !stop_agreed_) {
    stop_agreed_ = true;
    const double mean = totals[3] / totals[2];
    agreed_signal_ = mean == std::floor(mean) ? static_cast<int>(mean) : SIGTERM;
    // The signalled process printed its own note if it is rank 0; else rank 0 says why the job stops (a
    // warning, so --quiet shows it too: nothing on rank 0's terminal asked for it).
    if (!stop_requested())
      say(str("warning: ", static_cast<int64_t>(totals[2]), " of the ", group_.size(), " processes received signal ",
              agreed_signal_, ": stopping after this step and saving a checkpoint"));
  }
  ++step_;
  // Token average and clip: the norm and the NaN/Inf check from one read of the gradient; the factor is applied
  // by the optimizer's update as it reads the gradient, not by a pass of its own.
  summary_.trained = true;
  const AveragedGradient g = diverged(loss_sum, tokens)
                                 ? AveragedGradient{false}
                                 : measure_average_and_clip(params.grad(), tokens, opt_.clip_norm);
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
  optimizer_.step(params, lr, g.factor);
  window_loss_ += loss_sum;
  window_tokens_ += tokens;
  total_tokens_ += tokens;
  if (opt_.log_every > 0 && step_ % opt_.log_every == 0) log_train(grad_norm, lr);
  if (opt_.check_every > 0 && step_ % opt_.check_every == 0) check_parameters_across_ranks();
}

// What a run that stops on divergence leaves: said from what it wrote (it may have written nothing yet).
std::string Trainer::checkpoints_kept() const {
  if (opt_.run_dir.empty()) return "no run dir was written";
  if (last_saved_step_ < 0) return str("the run wrote no checkpoint in ", opt_.run_dir);
  return str("the checkpoints in ", opt_.run_dir, " are intact (none was written after step ", last_saved_step_,
             "; best.h5, if any, is the best validated one)");
}

void Trainer::validate(int64_t epoch) {
  if (!task_.has_validation()) return;
  const double started = progress_.elapsed_s();
  const ValidationResult v = task_.validate();
  outside_training_s_ += progress_.elapsed_s() - started;
  // Interrupted: the result may be partial and is not used; the checkpoint then says this step's
  // validation has not run, and the resumed run does it.
  if (stopping()) return;
  last_valid_step_ = step_;
  const double ppl = ppl_of(v.loss_sum, v.tokens);
  summary_.last_valid_ppl = ppl;
  schedule_.on_validation(ppl);
  // A NaN perplexity (a diverged model) is never an improvement: the run stops on it below.
  const bool improved = std::isfinite(ppl) && (best_valid_ppl_ == 0.0 || ppl < best_valid_ppl_);
  if (improved) {
    best_valid_ppl_ = ppl;
    bad_validations_ = 0;
  } else {
    ++bad_validations_;
  }
  say(str("validation at step ", step_, ": ppl ", ppl, improved ? " (best)" : "", "  loss ",
          v.tokens ? v.loss_sum / static_cast<double>(v.tokens) : 0.0));
  if (is_root()) {
    nlohmann::json rec{{"type", "valid"},
                       {"step", step_},
                       {"epoch", epoch},
                       {"valid_loss", v.tokens ? v.loss_sum / static_cast<double>(v.tokens) : 0.0},
                       {"valid_ppl", ppl},
                       {"best_valid_ppl", best_valid_ppl_},
                       {"elapsed_s", progress_.elapsed_s()}};
    for (const auto& [k, val] : v.extra) rec[k] = val;
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
  if (is_root() && opt_.on_started) opt_.on_started();
  window_start_s_ = progress_.elapsed_s(), window_outside_start_s_ = outside_training_s_;
  // A resumed run that had already ended stays ended, for the reason it ended: its limits, or early
  // stopping (whose patience the checkpoint keeps; resuming used to train on past it and replace best.h5,
  // so an interrupted sweep re-entering a finished trial got another result than an uninterrupted one).
  if (opt_.max_epochs > 0 && epochs_completed_ >= opt_.max_epochs)
    stop_ = true, summary_.stop_reason = str("already done (train.max_epochs = ", opt_.max_epochs, " reached)");
  if (opt_.max_steps > 0 && step_ >= opt_.max_steps)
    stop_ = true, summary_.stop_reason = str("already done (train.max_steps = ", opt_.max_steps, " reached)");
  if (opt_.early_stopping > 0 && bad_validations_ >= opt_.early_stopping && step_ > 0)
    stop_ = true, summary_.stop_reason = str("already done (early stopping: no improvement in ", bad_validations_,
                                             " validations; raise train.early_stopping to train on)");

  while (!stop_) {
    if (!task_.next_batch()) {
      end_epoch();
      continue;
    }
    train_step();
    if (opt_.valid_every > 0 && step_ % opt_.valid_every == 0) validate(task_.epoch());
    if (opt_.checkpoint_every > 0 && step_ % opt_.checkpoint_every == 0) save_checkpoint_now();
    if (opt_.max_steps > 0 && step_ >= opt_.max_steps) {
      stop_ = true;
      summary_.stop_reason = str("reached train.max_steps = ", opt_.max_steps);
    }
    if (stopping()) {
      stop_ = true;
      summary_.stop_reason = "interrupted (checkpoint saved)";
      summary_.stop_signal = group_.size() > 1 ? agreed_signal_ : stop_signal();
    }
  }
  // The end of the run: a final validation when the last one is stale, and a final checkpoint.
  if (last_valid_step_ != step_ && step_ > 0 && summary_.stop_reason.rfind("early", 0) != 0 && !stopping())
    validate(last_step_epoch_ > 0 ? last_step_epoch_ : task_.epoch());
  save_checkpoint_now();
  summary_.steps = step_;
  summary_.epochs_completed = epochs_completed_;
  summary_.best_valid_ppl = best_valid_ppl_;
  if (window_tokens_ > 0) summary_.last_train_loss = window_loss_ / static_cast<double>(window_tokens_);
  summary_.elapsed_s = progress_.elapsed_s();
  const double training_s = summary_.elapsed_s - outside_training_s_;
  summary_.tokens_per_s = training_s > 0 ? static_cast<double>(total_tokens_) / training_s : 0.0;
  say("training finished: " + summary_.stop_reason);
  return summary_;
}

}  // namespace luong
