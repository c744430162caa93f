#include "launch/run_config.h"

#include "framework/nn/attention/attention.h"
#include "framework/nn/init.h"
#include "framework/optim/optimizer.h"
#include "framework/optim/schedule.h"

namespace luong::cli {

ConfigSchema run_schema() {
  ConfigSchema s = nmt::nmt_schema();
  s.at("model.attention").registered = [] { return AttentionRegistry::instance().names(); };
  s.at("model.attention_score").registered = [] { return AttentionScoreRegistry::instance().names(); };
  s.at("model.init").registered = [] { return InitRegistry::instance().names(); };
  s.at("optim.schedule").registered = [] { return ScheduleRegistry::instance().names(); };
  return s;
}

LoadedConfig load_run_config(const std::string& file, const std::vector<std::string>& sets) {
  Config c = file.empty() ? Config(run_schema()) : Config::load_file(run_schema(), file);
  for (const auto& s : sets) c.set(s);
  nmt::NmtConfig n = nmt::nmt_config_from(c);
  return {std::move(c), std::move(n)};
}

OptimizerOptions optimizer_options(const nmt::OptimConfig& optim) {
  OptimizerOptions o;
  o.momentum = optim.momentum;
  o.beta1 = optim.beta1, o.beta2 = optim.beta2, o.eps = optim.eps, o.weight_decay = optim.weight_decay;
  return o;
}

}  // namespace luong::cli
