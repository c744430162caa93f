// `luong translate`: sentences on stdin, translations on stdout (one per line; with --n-best N, N lines
// "index ||| translation ||| score" per sentence). An empty input line gives an empty output line.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "framework/core/precision.h"
#include "launch/commands.h"
#include "launch/translate_util.h"
#include "models/nmt/data/text_reader.h"

namespace luong::cli {
namespace {

void run(const TranslateArgs& a) {
  validate_translate_args(a);
  prepare_attention_plot_dir(a);
  nmt::Translator translator(a.checkpoint, Device::parse(a.device));
  // GEMMs in the precision the checkpoint was trained with (train.precision of its stored config).
  set_gemm_precision(parse_gemm_precision(translator.config().train.precision));
  // Errors name the line: unreadable stdin, invalid UTF-8, NUL bytes.
  const std::vector<std::string> lines = nmt::read_stdin_lines();
  const auto translations = translate_with_progress(translator, lines, a, "translate:");
  for (size_t i = 0; i < translations.size(); ++i) {
    if (a.n_best <= 1) {
      std::cout << translations[i].text << "\n";
      continue;
    }
    for (const auto& h : translations[i].nbest)
      std::cout << i << " ||| " << translator.tokenizer().detokenize(translator.tgt_vocab().decode(h.tokens))
                << " ||| " << h.score << "\n";
  }
  flush_stdout();
  write_attention_plots(a, translations);
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<TranslateArgs>();
  auto* cmd = app.add_subcommand("translate", "Translate sentences from stdin to stdout with a checkpoint");
  add_translate_options(*cmd, *args, /*with_n_best=*/true);
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
