// `luong train`: trains a model from a YAML config, on one process or under mpirun.
//   luong train --config configs/multi30k.yaml --run-dir checkpoints/m30k [--set k=v ...] [--resume auto]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "framework/dist/bootstrap.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/io/directory_lock.h"
#include "framework/io/json_text.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/optim/optimizer.h"
#include "framework/optim/schedule.h"
#include "framework/train/resume_point.h"
#include "framework/train/stop_signals.h"
#include "framework/train/trainer.h"
#include "launch/commands.h"
#include "launch/config_diff.h"
#include "launch/rank_agreement.h"
#include "launch/run_config.h"
#include "models/nmt/data/bpe.h"
#include "models/nmt/nmt_task.h"

namespace luong::cli {
namespace {

struct TrainArgs {
  std::string config;
  std::string run_dir;
  std::vector<std::string> sets;
  std::string resume;
  bool overwrite = false;
  bool json = false;
  bool quiet = false;
};

// Checks the run directory before any data is loaded: it must be a directory this process can create,
// and a fresh run (no --resume) must not mix its checkpoints with another run's. Returns whether --overwrite
// has an earlier run's checkpoints and best.h5 to delete: that is done once the new run has started (its data
// read, its model built), so a run that cannot start (a missing file, no GPU) leaves the earlier one intact.
bool prepare_run_dir(const TrainArgs& a) {
  namespace fs = std::filesystem;
  LUONG_CHECK(!a.run_dir.empty(), "--run-dir is empty: name the directory for checkpoints and metrics");
  std::error_code ec;
  if (fs::exists(a.run_dir, ec) && !fs::is_directory(a.run_dir, ec))
    LUONG_FAIL("--run-dir ", a.run_dir, " exists and is not a directory");
  // An explicit checkpoint is checked before anything is created or loaded (its contents when resuming).
  if (!a.resume.empty() && a.resume != "auto" && !fs::is_regular_file(a.resume, ec))
    LUONG_FAIL("--resume ", a.resume, fs::is_directory(a.resume, ec) ? " is a directory" : " does not exist",
               ": give a checkpoint file (e.g. <run-dir>/best.h5) or 'auto'");
  fs::create_directories(a.run_dir, ec);
  if (ec) LUONG_FAIL("--run-dir ", a.run_dir, ": cannot create it: ", ec.message());
  lock_directory(a.run_dir, "--run-dir", "luong train");
  if (!a.resume.empty() || !holds_checkpoints(a.run_dir)) return false;
  if (!a.overwrite)
    LUONG_FAIL("--run-dir ", a.run_dir, " already holds a run's checkpoints: continue it with --resume auto, ",
               "or start over with --overwrite (deletes its checkpoints, best.h5 and metrics.jsonl), or choose ",
               "another --run-dir");
  return true;
}

// Where train.valid_translations keeps them, in the run directory.
constexpr const char* kValidTranslationsDir = "valid_translations";

// --overwrite's deletion, once the new run has started (metrics.jsonl was already started afresh by then).
void delete_earlier_run(const std::string& run_dir, const std::function<void(const std::string&)>& log) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto files = list_checkpoints(run_dir);
  for (const auto& f : files) fs::remove(f.path, ec);
  fs::remove(best_checkpoint_path(run_dir), ec);
  // The earlier run's TensorBoard event files (train.tensorboard), not the one this process writes.
  const std::string own_suffix = "." + std::to_string(::getpid()) + ".luong";
  int events = 0;
  for (const auto& e : fs::directory_iterator(run_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("events.out.tfevents.", 0) == 0 && name.size() > 6 && name.ends_with(".luong") &&
        !name.ends_with(own_suffix))
      events += fs::remove(e.path(), ec);
  }
  // And its validations' translations (train.valid_translations): this run has validated nothing yet.
  const std::uintmax_t translations = fs::remove_all(run_dir + "/" + kValidTranslationsDir, ec);
  log(str(
      "--overwrite: deleted the earlier run's ", files.size(), " checkpoint(s) and best.h5",
      events ? str(", ", events, " TensorBoard event file(s)") : std::string(),
      translations && translations != static_cast<std::uintmax_t>(-1) ? ", its validation translations" : std::string(),
      " in ", run_dir));
}

// The text summary's translation scores: the best under train.valid_metric bleu or chrf, else the last
// validation's BLEU when computed.
std::string scores_summary(const TrainSummary& s) {
  if (s.valid_metric != "valid_ppl")
    return "best valid " + metric_setting(s.valid_metric) + " " +
           (s.best_valid_score ? str(*s.best_valid_score) : std::string("n/a")) + ", ";
  const auto bleu = s.last_valid_extra.find("valid_bleu"), chrf = s.last_valid_extra.find("valid_chrf");
  if (bleu == s.last_valid_extra.end()) return "";
  return str("last valid bleu ", bleu->second, ", ",
             chrf == s.last_valid_extra.end() ? std::string() : str("chrf ", chrf->second, ", "));
}

// scored: validations translate the validation set and score it (train.valid_bleu, or train.valid_metric bleu or
// chrf), so the JSON summary has last_valid_bleu and last_valid_chrf (null when no validation ran in this process).
void print_summary(const TrainSummary& s, bool json, bool scored) {
  const bool validated = s.best_valid_ppl > 0;  // never validated: no data.valid_* or no validation yet
  if (json) {
    auto or_null = [](bool known, double v) { return known ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json out{{"steps", s.steps},
                       {"epochs", s.epochs_completed},
                       {"best_valid_ppl", or_null(validated, s.best_valid_ppl)},
                       {"last_valid_ppl", or_null(s.last_valid_ppl > 0, s.last_valid_ppl)},
                       {"train_loss", or_null(s.trained, s.last_train_loss)},
                       {"tokens_per_s", or_null(s.trained, s.tokens_per_s)},
                       {"elapsed_s", s.elapsed_s},
                       {"stop_reason", s.stop_reason},
                       {"resumed_from", s.resumed_from}};
    // train.valid_metric bleu (chrf) adds best_valid_bleu (best_valid_chrf): the score of best.h5.
    if (s.valid_metric != "valid_ppl")
      out["best_" + s.valid_metric] = or_null(s.best_valid_score.has_value(), s.best_valid_score.value_or(0.0));
    if (scored) out["last_valid_bleu"] = out["last_valid_chrf"] = nullptr;
    for (const auto& [k, v] : s.last_valid_extra) out["last_" + k] = v;
    std::cout << json_text(out) << "\n";
  } else {
    std::cout << "steps " << s.steps << ", epochs completed " << s.epochs_completed << ", best valid ppl "
              << (validated ? str(s.best_valid_ppl) : std::string("n/a")) << ", " << scores_summary(s)
              << static_cast<int64_t>(s.tokens_per_s) << " target tokens/s, " << format_duration(s.elapsed_s) << " ("
              << s.stop_reason << ")\n";
  }
}

TrainerOptions trainer_options(const nmt::NmtConfig& c, const TrainArgs& a) {
  TrainerOptions o;
  o.run_dir = a.run_dir;
  o.max_steps = c.train.max_steps;
  o.max_epochs = c.train.max_epochs;
  o.valid_every = c.train.valid_every;
  o.log_every = c.train.log_every;
  o.checkpoint_every = c.train.checkpoint_every;
  o.checkpoint_minutes = c.train.checkpoint_minutes;
  o.keep_checkpoints = c.train.keep_checkpoints;
  o.tensorboard = c.train.tensorboard;
  o.early_stopping = c.train.early_stopping;
  o.valid_metric = "valid_" + c.train.valid_metric;  // a key of the validation record: valid_ppl, valid_bleu, ...
  o.valid_metric_higher_is_better = c.train.valid_metric != "ppl";
  o.max_bad_steps = c.train.max_bad_steps;
  o.clip_norm = c.optim.clip_norm;
  o.ema_decay = c.optim.ema_decay;
  o.bucket_mb = c.dist.bucket_mb;
  o.check_every = c.dist.check_every;
  o.resume = a.resume;
  o.quiet = a.quiet;
  return o;
}

void run(const TrainArgs& a) {
  LUONG_CHECK(a.resume.empty() || !a.overwrite, "--overwrite starts a run over; it cannot be combined with --resume");
  LoadedConfig cfg = load_run_config(a.config, a.sets);
  const nmt::NmtConfig& c = cfg.nmt;
  auto group = make_process_group(c.dist.backend, Device::parse(c.device));
  const bool root = group->rank() == 0;
  const bool overwrite_pending = root && prepare_run_dir(a);
  group->set_timeout(std::chrono::seconds(c.dist.timeout_s));
  auto log = [&](const std::string& s) {  // --quiet keeps warnings
    if (root && (!a.quiet || s.rfind("warning:", 0) == 0)) std::cerr << s << "\n";
  };
  if (root)
    log(str("luong ", LUONG_VERSION, ": ", group->size(), " process(es), backend ", group->backend(), ", ",
            cpu::num_threads(), " CPU thread(s)", group->size() > 1 ? " each" : ""));
  const std::string config_text = cfg.config.dump();
  check_configs_agree(*group, config_text);

  // A run started with train.init_from takes its vocabularies and units from the checkpoint it resumes from
  // (its own checkpoints hold them), so the starting checkpoint is read by a new run only, and may be gone by
  // the time the run resumes. That needs the checkpoint to resume before the task is built; it is found early
  // only then, so that a plain resume does not hold a large checkpoint while the text is tokenized. Every
  // process reads its files itself (the file system is shared, as for the data); the data check below then
  // covers the vocabularies they bring, the trainer the step each process resumes.
  std::optional<ResumePoint> resume_point;
  std::optional<nmt::StartingPoint> start;
  if (!c.train.init_from.empty()) {
    resume_point = find_resume_point(a.resume, a.run_dir, log);
    // One process reports its resume error at once (not a missing starting checkpoint in its place); under
    // mpirun the trainer has every rank fail together.
    if (resume_point->error && group->size() == 1) std::rethrow_exception(resume_point->error);
    if (!resume_point->checkpoint) {
      start = nmt::read_starting_point(c.train.init_from, config_text, c.train.init_vocabulary == "data");
    } else if (!(start = nmt::resumed_starting_point(*resume_point->checkpoint))) {
      log(str("warning: train.init_from has no effect on this run: it resumes from ", resume_point->checkpoint->path,
              ", its own, and began without a starting checkpoint (start a new run, in another --run-dir, to start "
              "from ",
              c.train.init_from, ")"));
    }
  }
  nmt::NmtTask task(c, *group, log, std::move(start));
  if (c.train.valid_translations) task.keep_valid_translations_in(a.run_dir + "/" + kValidTranslationsDir);
  check_data_agrees(*group, task.data_fingerprint(),
                    str(task.training_pairs(), " training pairs from ", c.data.train_src, " / ", c.data.train_tgt));
  const OptimizerOptions oo = optimizer_options(c.optim);
  auto optimizer = make_optimizer(c.optim.name, oo);
  ScheduleOptions so;
  so.base_lr = c.optim.lr, so.decay_start = c.optim.decay_start, so.decay_factor = c.optim.decay_factor;
  so.warmup_steps = c.optim.warmup_steps, so.plateau_patience = c.optim.plateau_patience;
  auto schedule = make_schedule(c.optim.schedule, so);

  TrainerOptions to = trainer_options(c, a);
  to.resume_point = std::move(resume_point);
  to.frozen = task.frozen_parameters();
  to.checkpoint_strings["config"] = config_text;
  // The run directory's metadata is written once the run has resumed (or started): a refused resume
  // (another model size, other data) leaves the directory as it was.
  to.on_started = [&] {
    if (overwrite_pending) delete_earlier_run(a.run_dir, log);
    std::ofstream(a.run_dir + "/config.yaml") << config_text;
    task.src_vocab().save(a.run_dir + "/vocab.src.txt");
    task.tgt_vocab().save(a.run_dir + "/vocab.tgt.txt");
    // One merge per line, as subword-nmt writes its codes (data.bpe_codes and data.bpe_codes_tgt read them
    // back); the files of another encoding (an overwritten run's) are removed.
    const nmt::Subwords& subwords = task.subwords();
    const bool joint = subwords.is_joint();
    for (const auto& [file, bpe] : {std::pair{"bpe.merges.txt", joint ? subwords.src : nullptr},
                                    std::pair{"bpe.src.merges.txt", joint ? nullptr : subwords.src},
                                    std::pair{"bpe.tgt.merges.txt", joint ? nullptr : subwords.tgt}}) {
      if (bpe) {
        std::ofstream merges(a.run_dir + "/" + file);
        for (const std::string& m : bpe->to_list()) merges << m << "\n";
      } else {
        std::error_code ec;
        std::filesystem::remove(a.run_dir + "/" + file, ec);
      }
    }
  };
  to.config_changes = [&](const std::string& saved, int64_t saved_world) {
    return config_changes(saved, config_text, saved_world, group->size());
  };
  install_stop_signal_handlers(/*notes=*/root);
  Trainer trainer(task, *optimizer, *schedule, *group, to);
  const TrainSummary s = trainer.run();
  silence_stop_signal_notes();
  if (root) print_summary(s, a.json, c.train.scores_valid_translations());
  // Stopped by a signal: the checkpoint is saved, and the exit status says the run did not finish
  // (128 + signal, as a shell reports it), so `luong train ... && luong eval ...` does not go on.
  // Under mpirun only the stop the processes agreed on counts: a process that was not signalled reports the
  // signal another one received, and a signal that came after the last step (the run completed; no step
  // was left to agree on it) does not turn the job's status into an interruption on one rank only.
  const int sig = group->size() > 1 ? s.stop_signal : stop_signal();
  if (sig) throw CLI::RuntimeError(128 + sig);
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "Train a model (single process, or one process per GPU/CPU under mpirun)");
  cmd->add_option("--config,-c", args->config, "YAML config file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--run-dir,-o", args->run_dir, "Run directory for checkpoints, metrics.jsonl and config.yaml")
      ->required();
  cmd->add_option("--set", args->sets, "Override a config key: --set section.key=value (repeatable)");
  cmd->add_option("--resume", args->resume, "'auto' (newest valid checkpoint in the run dir) or a checkpoint path");
  cmd->add_flag("--overwrite", args->overwrite,
                "Start over in a run dir that holds another run: deletes its checkpoints, best.h5 and metrics.jsonl");
  cmd->add_flag("--json", args->json, "Print the summary as one JSON line");
  cmd->add_flag("--quiet,-q", args->quiet, "No progress line or informational messages (warnings still show)");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
