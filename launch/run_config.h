// Loading a run's config the same way in every subcommand: the YAML file, then --set overrides, with the
// names of registered components (attention variants, initialisers, optimizers, schedules) validated.
#pragma once
#include <string>
#include <vector>

#include "framework/optim/optimizer.h"
#include "models/nmt/nmt_config.h"

namespace luong::cli {

struct LoadedConfig {
  Config config;
  nmt::NmtConfig nmt;
};

LoadedConfig load_run_config(const std::string& file, const std::vector<std::string>& sets);
// The schema with registry validators installed.
ConfigSchema run_schema();
// The optimizer's hyperparameters from the optim.* keys (train and dump-step build the same optimizer).
OptimizerOptions optimizer_options(const nmt::OptimConfig& optim);

}  // namespace luong::cli
