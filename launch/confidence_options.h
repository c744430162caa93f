// --confidence and --confidence-n, which `luong bleu` and `luong eval` take as sacrebleu does.
#pragma once
#include <string>

#include "models/nmt/significance/paired_tests.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace luong::cli {

struct ConfidenceOptions {
  bool enabled = false;
  int resamples = significance::kDefaultResamples;
};

// Adds both options (--confidence-n needs --confidence; at least 1 resample); returns --confidence, for
// commands that exclude it from other options. `help` describes --confidence.
CLI::Option* add_confidence_options(CLI::App& cmd, ConfidenceOptions& options, const std::string& help);

}  // namespace luong::cli
