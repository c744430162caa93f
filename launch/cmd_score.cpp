// `luong score`: how probable a checkpoint (or an ensemble) finds each given translation, one line per pair.
//   luong score --checkpoint run/best.h5 [more.h5 ...] --src test.en --tgt hyps.de [--normalize] [--json]
// For reranking n-best lists, filtering noisy parallel data by per-token scores (dual conditional
// cross-entropy filtering uses two directions' --normalize scores), or finding the sentences two models
// disagree on.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "framework/core/precision.h"
#include "framework/io/json_text.h"
#include "launch/commands.h"
#include "launch/translate_util.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/sentence_scores.h"
#include "models/nmt/translator.h"

namespace luong::cli {
namespace {

struct ScoreArgs {
  std::vector<std::string> checkpoints;
  std::string device = "cpu";
  std::string src, tgt;
  int64_t batch_size = 32;
  CLI::Option* batch_size_option = nullptr;  // not given: the checkpoint's eval.batch_size
  bool normalize = false, json = false, progress = false;
};

// Every line of both files, as pairs; the lines whose source is blank are left out (and counted): the model
// conditions on the source, and has nothing to condition on there. A blank target is scored (</s> alone).
nmt::ParallelText read_pairs(const ScoreArgs& a) {
  std::vector<std::string> src = nmt::lines_of_file_text(nmt::read_text_file(a.src), a.src);
  std::vector<std::string> tgt = nmt::lines_of_file_text(nmt::read_text_file(a.tgt), a.tgt);
  if (src.size() != tgt.size())
    LUONG_FAIL("score: '", a.src, "' has ", src.size(), " lines but '", a.tgt, "' has ", tgt.size(),
               " lines (the files must be line-aligned)");
  if (src.empty()) LUONG_FAIL("score: ", a.src, " is empty (no lines)");
  nmt::ParallelText text;
  text.lines = static_cast<int64_t>(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (nmt::is_blank_line(src[i])) {
      ++text.empty_skipped;
      continue;
    }
    text.src.push_back(std::move(src[i]));
    text.tgt.push_back(std::move(tgt[i]));
    text.line_numbers.push_back(static_cast<int64_t>(i) + 1);
  }
  return text;
}

std::string fixed(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

void run(ScoreArgs a) {
  if (a.batch_size < 1) LUONG_FAIL("--batch-size must be >= 1, got ", a.batch_size);
  nmt::Translator translator(a.checkpoints, Device::parse(a.device));
  if (a.batch_size_option->count() == 0) a.batch_size = translator.config().eval.batch_size;
  set_gemm_precision(parse_gemm_precision(translator.config().train.precision));
  nmt::ParallelText text = read_pairs(a);
  const int64_t lines = text.lines, blank_sources = text.empty_skipped;
  const nmt::Corpus corpus =
      nmt::encode_corpus(nmt::tokenize_corpus(std::move(text), translator.tokenizer().options(), translator.subwords()),
                         translator.src_vocab(), translator.tgt_vocab(), 0);
  PassProgress progress("score", corpus.examples.size(), a.progress);
  progress.update(0);
  const std::vector<nmt::PairScore> scores = nmt::score_pairs(
      translator.ensemble(), corpus, a.batch_size, translator.device(), [&](size_t done) { progress.update(done); });
  // Line k's score, or none for a blank source.
  std::vector<const nmt::PairScore*> by_line(static_cast<size_t>(lines), nullptr);
  for (size_t i = 0; i < scores.size(); ++i) by_line[static_cast<size_t>(corpus.examples[i].line - 1)] = &scores[i];
  double log_prob = 0.0;
  int64_t tokens = 0;
  for (size_t k = 0; k < by_line.size(); ++k) {
    const nmt::PairScore* s = by_line[k];
    if (s) log_prob += s->log_prob, tokens += s->tokens;
    if (a.json) {
      nlohmann::json row{{"line", k + 1}, {"log_prob", nullptr}, {"tokens", 0}, {"per_token", nullptr}};
      if (s) row["log_prob"] = s->log_prob, row["tokens"] = s->tokens, row["per_token"] = s->log_prob / s->tokens;
      std::cout << json_text(row) << "\n";
    } else {
      std::cout << (s ? fixed(a.normalize ? s->log_prob / static_cast<double>(s->tokens) : s->log_prob) : "nan")
                << "\n";
    }
  }
  flush_stdout();
  // The whole set's perplexity, which `luong eval` gives for the same pairs (it skips blank targets too).
  std::cerr << "score: " << scores.size() << " pairs, " << tokens << " target tokens, perplexity "
            << (tokens > 0 ? std::exp(-log_prob / static_cast<double>(tokens)) : NAN) << "\n";
  if (blank_sources > 0)
    std::cerr << "luong: warning: " << blank_sources << " of " << lines
              << " lines have a blank source and no score (printed as " << (a.json ? "null" : "nan") << ")\n";
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<ScoreArgs>();
  auto* cmd = app.add_subcommand(
      "score", "Log-probability of each target line given its source line under a checkpoint (or an ensemble)");
  cmd->add_option("--checkpoint", args->checkpoints,
                  "Checkpoint file; several score as an ensemble (per token, the log of the members' mean "
                  "probability)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--src", args->src, "Source sentences, one per line")->required()->check(CLI::ExistingFile);
  cmd->add_option("--tgt", args->tgt, "Target sentences to score, one per source line")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--device", args->device, "cpu, cuda or cuda:N")->capture_default_str();
  args->batch_size_option = cmd->add_option("--batch-size", args->batch_size,
                                            "Pairs scored together, >= 1 (default: the checkpoint's eval.batch_size)");
  cmd->add_flag("--normalize", args->normalize,
                "Print the log-probability per target token (the sentence's pieces and </s>) instead of its sum");
  cmd->add_flag("--json", args->json,
                "One JSON object per line: line, log_prob, tokens, per_token (null for a blank source)");
  cmd->add_flag("--progress", args->progress, "Progress lines on stderr even when it is not a terminal");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
