// `luong gen-data`: writes the deterministic toy corpus used by configs/tiny.yaml and the tests.
//   luong gen-data --out data/toy
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "framework/core/error.h"
#include "launch/commands.h"
#include "models/nmt/data/toy_data.h"

namespace luong::cli {
namespace {

struct GenDataArgs {
  std::string out = "data/toy";
  nmt::ToyDataOptions toy;
  int64_t seed = 1;  // signed, so that a negative seed is refused instead of wrapping to 2^64 - 1
};

// Ranges are checked here rather than with CLI11 validators, whose message ("Value 0 not in range 0.000000
// to 1.797693e+308") does not say what is allowed; the caps keep a mistyped count from filling the disk.
void validate(const GenDataArgs& a) {
  const std::pair<const char*, int64_t> splits[] = {{"--train", a.toy.train}, {"--valid", a.toy.valid},
                                                    {"--test", a.toy.test}};
  for (const auto& [option, n] : splits)
    if (n < 1 || n > nmt::kMaxToyPairs)
      LUONG_FAIL(option, " must be from 1 to ", nmt::kMaxToyPairs, " sentence pairs, got ", n);
  if (a.toy.min_len < 1 || a.toy.max_len < a.toy.min_len || a.toy.max_len > nmt::kMaxToyLength)
    LUONG_FAIL("sentence lengths need 1 <= --min-len <= --max-len <= ", nmt::kMaxToyLength, " (words), got --min-len ",
               a.toy.min_len, " and --max-len ", a.toy.max_len);
  if (a.seed < 0) LUONG_FAIL("--seed must be >= 0, got ", a.seed);
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto a = std::make_shared<GenDataArgs>();
  auto* cmd = app.add_subcommand("gen-data", "Write the toy reverse-and-map corpus (train/valid/test .src/.tgt)");
  const std::string pairs = str(" (1 to ", nmt::kMaxToyPairs, ")");
  const std::string words = str(" (words, 1 <= --min-len <= --max-len <= ", nmt::kMaxToyLength, ")");
  cmd->add_option("--out,-o", a->out, "Output directory")->capture_default_str();
  cmd->add_option("--train", a->toy.train, "Training pairs" + pairs)->capture_default_str();
  cmd->add_option("--valid", a->toy.valid, "Validation pairs" + pairs)->capture_default_str();
  cmd->add_option("--test", a->toy.test, "Test pairs" + pairs)->capture_default_str();
  cmd->add_option("--min-len", a->toy.min_len, "Shortest sentence" + words)->capture_default_str();
  cmd->add_option("--max-len", a->toy.max_len, "Longest sentence" + words)->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed (>= 0)")->capture_default_str();
  cmd->callback([a] {
    validate(*a);
    a->toy.seed = static_cast<uint64_t>(a->seed);
    for (const auto& path : nmt::write_toy_data(a->out, a->toy)) std::cout << "wrote " << path << "\n";
  });
});

}  // namespace
}  // namespace luong::cli
