// `luong translate`: sentences on stdin, translations on stdout (one per line; with --n-best N, up to N lines
// "index ||| translation ||| score" per sentence, as Moses writes n-best lists: the distinct hypotheses the
// search finished). An empty input line gives an empty output line, or the one n-best entry "i |||  ||| 0".
// --alignment appends " ||| " and the word alignment to each line (Marian's form, also after an n-best entry).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>

#include "framework/core/error.h"
#include "launch/commands.h"
#include "launch/translate_util.h"
#include "models/nmt/data/line_stream.h"
#include "models/nmt/word_alignment.h"

namespace luong::cli {
namespace {

// " ||| " and the word alignment of a translation's tokens, with --alignment; "" without.
std::string alignment_field(const nmt::Translator& translator, const TranslateArgs& a,
                            const std::vector<std::string>& src_tokens, const std::vector<std::string>& tgt_tokens,
                            const std::vector<std::vector<float>>& attention) {
  if (a.alignment.empty()) return "";
  return " ||| " + nmt::word_alignment(nmt::word_attention(translator.tokenizer(), src_tokens, tgt_tokens, attention),
                                       alignment_threshold(a));
}

void print(const nmt::Translator& translator, const std::vector<nmt::Translation>& translations, size_t first_index,
           const TranslateArgs& a) {
  for (size_t i = 0; i < translations.size(); ++i) {
    const nmt::Translation& tr = translations[i];
    if (a.n_best <= 1 || a.mbr) {  // --mbr: the choice alone
      std::cout << tr.text << alignment_field(translator, a, tr.src_tokens, tr.tgt_tokens, tr.attention) << "\n";
      continue;
    }
    for (const auto& h : tr.nbest) {
      const std::vector<std::string> tokens = translator.tgt_vocab().decode(h.tokens);
      std::cout << first_index + i << " ||| " << translator.tokenizer().detokenize(tokens) << " ||| " << h.score
                << alignment_field(translator, a, tr.src_tokens, tokens, h.attention) << "\n";
    }
  }
  flush_stdout();  // each part as soon as it is translated: a pipeline downstream sees it at once
}

void run(TranslateArgs a) {
  validate_translate_args(a);
  prepare_attention_plot_dir(a);
  nmt::Translator translator(a.checkpoints, Device::parse(a.device));
  apply_checkpoint_decoding(a, translator.config().eval);
  use_trained_precision(translator);
  nmt::TranslateOptions options = translate_options(a);
  // Lines are translated as they arrive: up to 4 batches at a time while input keeps coming (a file, a
  // fast pipe), or whatever has arrived once the writer pauses (a person typing, a slow producer), so
  // output never waits for the end of the input. Errors name the line (invalid UTF-8, NUL bytes).
  nmt::LineStream input(STDIN_FILENO, "standard input");
  const size_t part_size = static_cast<size_t>(a.batch_size) * 4;
  PassProgress progress("translate:", 0, a.progress);
  std::vector<nmt::Translation> plotted;  // the first --plot-count translations, for --attention-plot
  size_t done = 0;
  for (;;) {
    std::vector<std::string> part;
    // A line that fails its checks (invalid UTF-8, a NUL byte) ends the input, but only after the lines that
    // came before it in the same read are translated: as a filter, every good line before it gets its output.
    std::exception_ptr bad_line;
    while (part.size() < part_size && (part.empty() || input.ready())) {
      std::optional<std::string> line;
      try {
        line = input.next();
      } catch (const Error&) {
        bad_line = std::current_exception();
        break;
      }
      if (!line) break;
      part.push_back(std::move(*line));
    }
    if (!part.empty()) {
      options.first_sentence = done;  // --sample: a line's draws are keyed by its line number
      std::vector<nmt::Translation> translations = translator.translate(part, options);
      print(translator, translations, done, a);
      for (auto& t : translations)
        if (!a.attention_plot.empty() && plotted.size() < static_cast<size_t>(a.plot_count))
          plotted.push_back(std::move(t));
      done += part.size();
      progress.update(done);
    }
    if (bad_line) std::rethrow_exception(bad_line);
    if (part.empty()) break;
  }
  write_attention_plots(a, plotted);
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<TranslateArgs>();
  auto* cmd = app.add_subcommand("translate", "Translate sentences from stdin to stdout with a checkpoint");
  add_translate_options(*cmd, *args, /*for_translate=*/true);
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
