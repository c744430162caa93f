// `luong gen-data`: writes the deterministic toy corpus used by configs/tiny.yaml and the tests.
//   luong gen-data --out data/toy
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "launch/commands.h"
#include "models/nmt/data/toy_data.h"

namespace luong::cli {
namespace {

struct GenDataArgs {
  std::string out = "data/toy";
  nmt::ToyDataOptions toy;
};

const bool kRegistered = add_command([](CLI::App& app) {
  auto a = std::make_shared<GenDataArgs>();
  auto* cmd = app.add_subcommand("gen-data", "Write the toy reverse-and-map corpus (train/valid/test .src/.tgt)");
  cmd->add_option("--out,-o", a->out, "Output directory")->capture_default_str();
  cmd->add_option("--train", a->toy.train, "Training pairs")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--valid", a->toy.valid, "Validation pairs")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--test", a->toy.test, "Test pairs")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--min-len", a->toy.min_len, "Shortest sentence (words)")->capture_default_str();
  cmd->add_option("--max-len", a->toy.max_len, "Longest sentence (words)")->capture_default_str();
  cmd->add_option("--seed", a->toy.seed, "Random seed")->capture_default_str();
  cmd->callback([a] {
    for (const auto& path : nmt::write_toy_data(a->out, a->toy)) std::cout << "wrote " << path << "\n";
  });
});

}  // namespace
}  // namespace luong::cli
