// `luong eval`: perplexity (teacher-forced) and BLEU of beam-search translations of a checkpoint.
//   luong eval --checkpoint run/best.h5 --src test.en --ref test.de [--beam 5] [--json]
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "framework/core/precision.h"
#include "launch/commands.h"
#include "launch/translate_util.h"
#include "models/nmt/bleu.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/nmt_task.h"

namespace luong::cli {
namespace {

struct EvalArgs {
  TranslateArgs t;
  std::string src, ref;
  bool json = false;
};

void run(const EvalArgs& a) {
  nmt::Translator translator(a.t.checkpoint, Device::parse(a.t.device));
  // GEMMs in the precision the checkpoint was trained with (train.precision of its stored config).
  set_gemm_precision(parse_gemm_precision(translator.config().train.precision));
  // Perplexity over every pair (no length limit: the test set must stay whole).
  const nmt::ParallelText text = nmt::read_parallel(a.src, a.ref);
  const nmt::Corpus corpus = nmt::encode_corpus(nmt::tokenize_corpus(text, translator.tokenizer()),
                                                translator.src_vocab(), translator.tgt_vocab(), 0);
  const ValidationResult v = nmt::evaluate_loss(translator.model(), corpus, a.t.batch_size, translator.device());
  const double ppl = v.tokens ? std::exp(v.loss_sum / static_cast<double>(v.tokens)) : 0.0;
  // BLEU of the translations of every source line against the raw reference lines.
  const auto sources = nmt::read_lines(a.src);
  const auto refs = bleu::read_lines_from_file(a.ref);
  const auto translations = translate_with_progress(translator, sources, a.t, !a.json);
  std::vector<std::string> hyps;
  for (const auto& tr : translations) hyps.push_back(tr.text);
  write_attention_plots(a.t, translations);
  const bleu::BleuScore score = bleu::corpus_bleu(hyps, refs);
  if (a.json) {
    std::cout << nlohmann::json{{"checkpoint", a.t.checkpoint}, {"src", a.src}, {"ref", a.ref}, {"sentences", sources.size()},
                                {"tokens", v.tokens}, {"ppl", ppl}, {"bleu", score.score}, {"bleu_signature", bleu::signature()},
                                {"bleu_line", score.format()}, {"beam_size", a.t.beam}}
                     .dump()
              << "\n";
  } else {
    std::cout << "perplexity " << ppl << " over " << v.tokens << " target tokens\n" << score.format(2, bleu::signature()) << "\n";
  }
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Perplexity and BLEU (beam search) of a checkpoint on a test set");
  add_translate_options(*cmd, args->t);
  cmd->add_option("--src", args->src, "Source sentences, one per line")->required()->check(CLI::ExistingFile);
  cmd->add_option("--ref", args->ref, "Reference translations, one per line")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", args->json, "Print one JSON line for scripts");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
