// The Trainer's checkpoints: agreeing (every rank) on the one a run resumes from (resume_point.h finds it) and
// restoring it, and writing one (every rank gathers its state, rank 0 writes, retention after). The step loop,
// validation and the schedule of saves are in trainer.cpp.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "framework/dist/checksum.h"
#include "framework/dist/parameter_sync.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/ops/tensor_math.h"
#include "framework/train/trainer.h"

namespace luong {
namespace {

// The first floating-point tensor of `state` that holds a NaN or an infinity, or "" when there is none.
std::string first_non_finite(const StateDict& state) {
  for (const auto& [name, t] : state.tensors)
    if ((t.dtype() == DType::f32 || t.dtype() == DType::f64) && !std::isfinite(sum_squares(t))) return name;
  return "";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

Trainer::ConfigChanges Trainer::config_changes_since(const Checkpoint& ckpt) const {
  ConfigChanges out;
  const auto saved = ckpt.state.strings.find("config");
  if (!opt_.config_changes || saved == ckpt.state.strings.end()) return out;
  const auto world = ckpt.metadata.find("world_size");
  const int64_t saved_world = world == ckpt.metadata.end() ? group_.size() : std::stoll(world->second);
  for (const std::string& c : opt_.config_changes(saved->second, saved_world)) {
    if (!c.empty() && c[0] == '=') {
      out.same_steps.push_back(c.substr(1));
    } else {
      out.others.push_back(c);
    }
  }
  return out;
}

void Trainer::warn_about_config_changes(const Checkpoint& ckpt) {
  const ConfigChanges c = config_changes_since(ckpt);
  if (!c.same_steps.empty()) say("resuming with changed settings that keep the run's steps: " + joined(c.same_steps));
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
  ResumePoint point = opt_.resume_point
                          ? std::move(*opt_.resume_point)
                          : find_resume_point(opt_.resume, opt_.run_dir, [this](const std::string& s) { say(s); });
  opt_.resume_point.reset();
  skipped_on_resume_ = point.skipped;
  std::optional<Checkpoint> ckpt = std::move(point.checkpoint);
  if (group_.size() == 1) {
    if (point.error) std::rethrow_exception(point.error);
  } else {
    agree_on_resume(ckpt, point.error);
  }
  if (!ckpt) {
    // A fresh run: every rank starts from rank 0's parameters.
    if (group_.size() > 1) broadcast_parameters(task_.parameters(), group_);
    if (is_root() && !opt_.run_dir.empty())
      metrics_.open(opt_.run_dir + "/metrics.jsonl", 0, -1, opt_.tensorboard ? opt_.run_dir : "");
    return;
  }
  const StateDict& s = ckpt->state;
  const auto world = ckpt->metadata.find("world_size");
  const std::string saved_world = world == ckpt->metadata.end() ? "" : world->second;
  std::string saved_metric;
  try {
    task_.load_state(s, ckpt->path);
    restore_average(s, ckpt->path);
    optimizer_.load_state(s.sub("optim"));
    optimizer_.fit_state_to(task_.parameters());
    schedule_.load_state(s.sub("schedule"));
    const StateDict t = s.sub("trainer");
    step_ = t.ints.at("step");
    epochs_completed_ = t.ints.at("epochs_completed");
    bad_validations_ = t.ints.at("bad_validations");
    bad_steps_ = t.ints.at("bad_steps");
    best_valid_ppl_ = t.floats.at("best_valid_ppl");
    // Checkpoints from before train.valid_metric picked by perplexity and kept no score of their own.
    const auto metric = t.strings.find("valid_metric");
    saved_metric = metric == t.strings.end() ? "valid_ppl" : metric->second;
    const auto score = t.floats.find("best_valid_score");
    has_best_score_ = score != t.floats.end() || (saved_metric == "valid_ppl" && best_valid_ppl_ > 0.0);
    best_valid_score_ = score != t.floats.end() ? score->second : best_valid_ppl_;
  } catch (const std::out_of_range&) {
    LUONG_FAIL("cannot resume from ", ckpt->path, ": it has no trainer state (an averaged or exported model, not a ",
               "training checkpoint)");
  } catch (const Error& e) {
    const bool other_world = !saved_world.empty() && saved_world != std::to_string(group_.size());
    // The config keys that differ from the checkpoint's usually say why (model.layers: 2 -> 1): those that
    // shape what is loaded (the model, the vocabularies, the optimizer), not paths or rates.
    std::vector<std::string> shaping;
    for (const std::string& c : config_changes_since(*ckpt).others) {
      static const char* const kShaping[] = {
          "model.",           "optim.name:",   "data.src_vocab_size:", "data.tgt_vocab_size:", "data.min_freq:",
          "data.lowercase:",  "data.max_len:", "data.pool_batches:",   "train.batch_size:",    "train.batch_by:",
          "train.accumulate:"};  // the model, vocabularies, optimizer, data position
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
  LUONG_CHECK(std::isfinite(best_valid_score_), "cannot resume from ", ckpt->path,
              ": invalid trainer state (best validation score ", best_valid_score_, ")");
  // best.h5, the patience count and the plateau schedule's best all measure the run's metric: another one
  // would compare a BLEU score with a perplexity.
  const std::string saved = metric_setting(saved_metric), wanted = metric_setting(opt_.valid_metric);
  LUONG_CHECK(saved_metric == opt_.valid_metric, "cannot resume from ", ckpt->path,
              ": that run picks its best checkpoint by ", saved, " (train.valid_metric: ", saved, "), this one by ",
              wanted, "; resume with --set train.valid_metric=", saved,
              ", or start a new run (another --run-dir, or --overwrite)");
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
  // A validation a stop cut short (absent in files written before validations could be).
  const auto pending = s.ints.find("trainer/pending_valid_epoch");
  pending_valid_epoch_ = pending != s.ints.end() ? pending->second : -1;
  check_no_later_checkpoints(ckpt->path);  // before metrics.jsonl is cut back to this step
  summary_.resumed_from = ckpt->path;
  say("resumed from " + ckpt->path + " at step " + std::to_string(step_));
  warn_about_config_changes(*ckpt);
  if (is_root() && !opt_.run_dir.empty())
    metrics_.open(opt_.run_dir + "/metrics.jsonl", step_, last_valid_step_, opt_.tensorboard ? opt_.run_dir : "");
}

void Trainer::restore_average(const StateDict& s, const std::string& path) {
  Tensor& params = task_.parameters().data();
  const auto training = s.tensors.find("ema/training_params");
  if (training == s.tensors.end()) {
    // Written without an average (or before luong kept one): this run's average starts at its next step.
    if (ema_) {
      ema_->reset();
      if (s.ints.count("trainer/step") && s.ints.at("trainer/step") > 0)
        say(str("warning: optim.ema_decay: ", path, " holds no parameter average (its run kept none); the average ",
                "starts from the parameters at this step"));
    }
    return;
  }
  const auto updates = s.ints.find("ema/updates");
  LUONG_CHECK(updates != s.ints.end(), "ema/training_params without ema/updates (a damaged file)");
  const Tensor& raw = training->second;
  LUONG_CHECK(raw.numel() == params.numel(), "ema/training_params has ", raw.numel(), " values but the model has ",
              params.numel(), " parameters");
  LUONG_CHECK(raw.dtype() == DType::f32 || raw.dtype() == DType::f64, "ema/training_params is stored as ", raw.dtype(),
              "; expected floating point");
  LUONG_CHECK(!has_non_finite(raw), "ema/training_params holds NaN or infinite values");
  // model/ (now in params) is the average; the optimizer continues from the training parameters.
  if (ema_) {
    ema_->restore(params, updates->second, params);
  } else {
    say(str("warning: ", path, " was written with optim.ema_decay, this run keeps no average: it continues from the ",
            "training parameters (ema/training_params), and its checkpoints hold those from now on"));
  }
  params.copy_(raw);
}

void Trainer::save_checkpoint_now(bool best) {
  if (opt_.run_dir.empty() || last_saved_step_ == step_) return;
  if (bad_steps_ > 0) {  // the last step was skipped as diverged: its parameters are not worth keeping
    say(str("warning: no checkpoint at step ", step_, ": its loss was not finite"));
    return;
  }
  const auto started = progress_.elapsed_s();
  if (group_.size() > 1) {
    // A save is the ranks' joint act (the task may gather state in it): they must all save this step. The sum
    // of the steps and of their squares equal n x step and n x step^2 only when every rank's step is step_.
    std::vector<int64_t> steps{step_, step_ * step_};
    group_.all_reduce_scalars(steps);
    const int64_t n = group_.size();
    LUONG_CHECK(steps[0] == n * step_ && steps[1] == n * step_ * step_, "rank ", group_.rank(), " saves step ", step_,
                " but the ", n, " processes do not all save the same step (their steps sum to ", steps[0],
                "): the checkpoint cadence must be decided alike on every rank");
  }
  // With an average, model/ holds it (what eval, translate, average and train.init_from read, and what the
  // validations measured) and ema/training_params the parameters the optimizer steps. Both are views, swapped
  // until the write below is done.
  AveragedWeights averaged(ema_.get(), task_.parameters().data());
  // Every rank takes part in gathering state (collectives inside the task are allowed); rank 0 writes.
  StateDict state;
  StateDict part;
  if (averaged.active()) {
    state.tensors["ema/training_params"] = ema_->average();  // swapped: it holds the training parameters now
    state.ints["ema/updates"] = ema_->updates();
    state.floats["ema/decay"] = ema_->decay();
  }
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
  state.ints["trainer/pending_valid_epoch"] = pending_valid_epoch_;
  state.floats["trainer/best_valid_ppl"] = best_valid_ppl_;
  state.strings["trainer/valid_metric"] = opt_.valid_metric;
  if (has_best_score_) state.floats["trainer/best_valid_score"] = best_valid_score_;
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
  if (const int ms = test_delay_ms("LUONG_TEST_CHECKPOINT_DELAY_MS"); ms > 0)
    hook = [ms](const std::string&) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  save_checkpoint(checkpoint_path(opt_.run_dir, step_), state, meta, hook);
  if (best) mark_best(opt_.run_dir, step_);  // only right after the validation that improved, at its step
  if (opt_.keep_checkpoints > 0) apply_retention(opt_.run_dir, opt_.keep_checkpoints);
  outside_training_s_ += progress_.elapsed_s() - started;
  last_save_s_ = progress_.elapsed_s();  // train.checkpoint_minutes counts from the end of a save
}

}  // namespace luong
