// `luong bleu REF [--json]`: corpus BLEU of the hypotheses on stdin against REF, printed like
// `sacrebleu -f text REF < HYP` (or like its JSON output with --json).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "framework/core/error.h"
#include "launch/commands.h"
#include "models/nmt/bleu.h"

namespace luong::cli {
namespace {

struct BleuOptions {
  std::string reference;
  bool json = false;
  int width = 1;  // sacrebleu's command-line default
};

void run_bleu(const BleuOptions& o) {
  const auto refs = bleu::read_lines_from_file(o.reference);
  const auto hyps = bleu::read_lines(std::cin, "standard input");
  if (hyps.size() != refs.size())
    LUONG_FAIL("bleu: standard input has ", hyps.size(), " lines but the reference ", o.reference, " has ",
               refs.size());
  if (refs.empty()) LUONG_FAIL("bleu: the reference ", o.reference, " has no lines");
  const bleu::BleuScore score = bleu::corpus_bleu(hyps, refs);
  if (o.json) {
    std::cout << score.to_json(o.width) << "\n";
  } else {
    std::cout << score.format(o.width, bleu::signature()) << "\n";
  }
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto opts = std::make_shared<BleuOptions>();
  auto* cmd = app.add_subcommand("bleu", "Corpus BLEU of stdin against a reference file (sacreBLEU-compatible)");
  cmd->add_option("reference", opts->reference, "Reference file, one segment per line")->required();
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of the score line");
  cmd->add_option("-w,--width", opts->width, "Decimals of the score")->check(CLI::Range(0, 10));
  cmd->callback([opts] { run_bleu(*opts); });
});

}  // namespace
}  // namespace luong::cli
