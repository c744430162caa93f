#include "launch/confidence_options.h"

#include <CLI/CLI.hpp>

namespace luong::cli {

CLI::Option* add_confidence_options(CLI::App& cmd, ConfidenceOptions& options, const std::string& help) {
  CLI::Option* confidence = cmd.add_flag("--confidence", options.enabled, help);
  cmd.add_option("--confidence-n", options.resamples, "Bootstrap resamples of --confidence")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str()
      ->needs(confidence);
  return confidence;
}

}  // namespace luong::cli
