// `luong train`: trains a model from a YAML config, on one process or under mpirun.
//   luong train --config configs/multi30k.yaml --run-dir checkpoints/m30k [--set k=v ...] [--resume auto]
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "framework/dist/bootstrap.h"
#include "framework/optim/optimizer.h"
#include "framework/optim/schedule.h"
#include "framework/train/trainer.h"
#include "launch/commands.h"
#include "launch/run_config.h"
#include "models/nmt/nmt_task.h"

namespace luong::cli {
namespace {

struct TrainArgs {
  std::string config;
  std::string run_dir;
  std::vector<std::string> sets;
  std::string resume;
  bool json = false;
  bool quiet = false;
};

TrainerOptions trainer_options(const nmt::NmtConfig& c, const TrainArgs& a) {
  TrainerOptions o;
  o.run_dir = a.run_dir;
  o.max_steps = c.train.max_steps;
  o.max_epochs = c.train.max_epochs;
  o.valid_every = c.train.valid_every;
  o.log_every = c.train.log_every;
  o.checkpoint_every = c.train.checkpoint_every;
  o.keep_checkpoints = c.train.keep_checkpoints;
  o.early_stopping = c.train.early_stopping;
  o.max_bad_steps = c.train.max_bad_steps;
  o.clip_norm = c.optim.clip_norm;
  o.bucket_mb = c.dist.bucket_mb;
  o.check_every = c.dist.check_every;
  o.resume = a.resume;
  o.quiet = a.quiet;
  return o;
}

void run(const TrainArgs& a) {
  LoadedConfig cfg = load_run_config(a.config, a.sets);
  const nmt::NmtConfig& c = cfg.nmt;
  auto group = make_process_group(c.dist.backend, Device::parse(c.device));
  group->set_timeout(std::chrono::seconds(c.dist.timeout_s));
  const bool root = group->rank() == 0;
  auto log = [&](const std::string& s) {
    if (root && !a.quiet) std::cerr << s << "\n";
  };
  if (root) log(str("luong ", LUONG_VERSION, ": ", group->size(), " process(es), backend ", group->backend()));

  nmt::NmtTask task(c, *group, log);
  OptimizerOptions oo;
  oo.beta1 = c.optim.beta1, oo.beta2 = c.optim.beta2, oo.eps = c.optim.eps, oo.weight_decay = c.optim.weight_decay;
  auto optimizer = make_optimizer(c.optim.name, oo);
  ScheduleOptions so;
  so.base_lr = c.optim.lr, so.decay_start = c.optim.decay_start, so.decay_factor = c.optim.decay_factor;
  so.warmup_steps = c.optim.warmup_steps, so.plateau_patience = c.optim.plateau_patience;
  auto schedule = make_schedule(c.optim.schedule, so);

  TrainerOptions to = trainer_options(c, a);
  to.checkpoint_strings["config"] = cfg.config.dump();
  if (root && !a.run_dir.empty()) {
    std::filesystem::create_directories(a.run_dir);
    std::ofstream(a.run_dir + "/config.yaml") << cfg.config.dump();
    task.src_vocab().save(a.run_dir + "/vocab.src.txt");
    task.tgt_vocab().save(a.run_dir + "/vocab.tgt.txt");
  }
  install_stop_signal_handlers();
  Trainer trainer(task, *optimizer, *schedule, *group, to);
  const TrainSummary s = trainer.run();
  if (!root) return;
  if (a.json) {
    std::cout << nlohmann::json{{"steps", s.steps},
                                {"epochs", s.epochs_completed},
                                {"best_valid_ppl", s.best_valid_ppl},
                                {"last_valid_ppl", s.last_valid_ppl},
                                {"train_loss", s.last_train_loss},
                                {"tokens_per_s", s.tokens_per_s},
                                {"elapsed_s", s.elapsed_s},
                                {"stop_reason", s.stop_reason},
                                {"resumed_from", s.resumed_from}}
                     .dump()
              << "\n";
  } else {
    std::cout << "steps " << s.steps << ", epochs " << s.epochs_completed << ", best valid ppl " << s.best_valid_ppl
              << ", " << static_cast<int64_t>(s.tokens_per_s) << " target tokens/s, " << format_duration(s.elapsed_s)
              << " (" << s.stop_reason << ")\n";
  }
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "Train a model (single process, or one process per GPU/CPU under mpirun)");
  cmd->add_option("--config,-c", args->config, "YAML config file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--run-dir,-o", args->run_dir, "Run directory for checkpoints, metrics.jsonl and config.yaml")
      ->required();
  cmd->add_option("--set", args->sets, "Override a config key: --set section.key=value (repeatable)");
  cmd->add_option("--resume", args->resume, "'auto' (newest valid checkpoint in the run dir) or a checkpoint path");
  cmd->add_flag("--json", args->json, "Print the summary as one JSON line");
  cmd->add_flag("--quiet,-q", args->quiet, "No progress output");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
