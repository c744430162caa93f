// `luong list`: what a config may name (ops, attention variants, optimizers, schedules).
#include <iostream>

#include <CLI/CLI.hpp>

#include "framework/nn/attention/attention.h"
#include "framework/nn/init.h"
#include "framework/ops/op_registry.h"
#include "framework/optim/optimizer.h"
#include "framework/optim/schedule.h"
#include "launch/commands.h"

namespace luong::cli {
namespace {

void print(const char* title, const std::vector<std::string>& names) {
  std::cout << title << ":\n";
  for (const auto& n : names) std::cout << "  " << n << "\n";
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto* cmd =
      app.add_subcommand("list", "List registered ops, attention variants, optimizers, schedules and initialisers");
  cmd->callback([] {
    print("ops", OpRegistry::instance().names());
    print("attention", AttentionRegistry::instance().names());
    print("initialisers", InitRegistry::instance().names());
    print("optimizers", OptimizerRegistry::instance().names());
    print("schedules", ScheduleRegistry::instance().names());
  });
});

}  // namespace
}  // namespace luong::cli
