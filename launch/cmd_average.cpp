// `luong average`: the parameter average of several checkpoints, written as a new checkpoint.
//   luong average -o run/avg.h5 run/ckpt-9000.h5 run/ckpt-9500.h5 run/ckpt-10000.h5
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_average.h"
#include "launch/commands.h"

namespace luong::cli {
namespace {

struct AverageArgs {
  std::vector<std::string> inputs;
  std::string output;
};

void run(const AverageArgs& a) {
  LUONG_CHECK(a.inputs.size() >= 2, "luong average needs at least two checkpoints, got ", a.inputs.size());
  const StateDict avg = average_checkpoints(a.inputs);
  std::string sources;
  for (const auto& p : a.inputs) sources += (sources.empty() ? "" : ",") + p;
  save_checkpoint(a.output, avg, {{"averaged_from", sources}});
  std::cout << "wrote " << a.output << " (average of " << a.inputs.size() << " checkpoints)\n";
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<AverageArgs>();
  auto* cmd = app.add_subcommand("average", "Average the parameters of several checkpoints into a new one");
  cmd->add_option("checkpoints", args->inputs, "Checkpoints to average")->required()->check(CLI::ExistingFile);
  cmd->add_option("--output,-o", args->output, "Output checkpoint")->required();
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
