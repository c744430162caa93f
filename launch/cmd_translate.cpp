// `luong translate`: sentences on stdin, translations on stdout (one per line; with --n-best N, N lines
// "index ||| translation ||| score" per sentence).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "framework/core/precision.h"
#include "launch/commands.h"
#include "launch/translate_util.h"
#include "models/nmt/data/utf8.h"

namespace luong::cli {
namespace {

void run(const TranslateArgs& a) {
  nmt::Translator translator(a.checkpoint, Device::parse(a.device));
  // GEMMs in the precision the checkpoint was trained with (train.precision of its stored config).
  set_gemm_precision(parse_gemm_precision(translator.config().train.precision));
  std::vector<std::string> lines;
  for (std::string line; std::getline(std::cin, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const int64_t bad = nmt::utf8_invalid_offset(line);
    LUONG_CHECK(bad < 0, "stdin line ", lines.size() + 1, ": invalid UTF-8 at byte ", bad);
    lines.push_back(line);
  }
  const auto translations = translate_with_progress(translator, lines, a, false);
  for (size_t i = 0; i < translations.size(); ++i) {
    if (a.n_best <= 1) {
      std::cout << translations[i].text << "\n";
      continue;
    }
    for (const auto& h : translations[i].nbest)
      std::cout << i << " ||| " << translator.tokenizer().detokenize(translator.tgt_vocab().decode(h.tokens))
                << " ||| " << h.score << "\n";
  }
  std::cout.flush();
  write_attention_plots(a, translations);
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<TranslateArgs>();
  auto* cmd = app.add_subcommand("translate", "Translate sentences from stdin to stdout with a checkpoint");
  add_translate_options(*cmd, *args);
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
