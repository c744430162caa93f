// `luong score`: how probable a checkpoint (or an ensemble) finds each given translation, one line per pair.
//   luong score --checkpoint run/best.h5 [more.h5 ...] --src test.en --tgt hyps.de [--normalize] [--json]
//   luong score --checkpoint other.h5 --src test.en --n-best nbest.txt    # each hypothesis of an n-best list
// For reranking n-best lists, filtering noisy parallel data by per-token scores (dual conditional
// cross-entropy filtering scores each pair with both directions' models, --src and --tgt swapped for the reverse one,
// and compares their --normalize scores), or finding the sentences two models disagree on.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "framework/io/json_text.h"
#include "launch/commands.h"
#include "launch/sentence_pairs.h"
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
  std::string n_best;  // instead of --tgt: `index ||| hypothesis ||| ...` lines (luong translate --n-best, Moses)
  int64_t batch_size = 32;
  CLI::Option* batch_size_option = nullptr;  // not given: the checkpoint's eval.batch_size
  bool normalize = false, json = false, progress = false;
};

// The pairs to score: target k with the source line its_source[k] (0-based).
struct ScoreInput : SentencePairs {
  std::vector<std::string> n_best_lines;  // --n-best: each entry's line as read, printed back with its score
};

// --tgt: one target per source line.
ScoreInput read_targets(const ScoreArgs& a) {
  ScoreInput in;
  static_cast<SentencePairs&>(in) = read_line_aligned(a.src, a.tgt, "score");
  return in;
}

// --n-best: `index ||| hypothesis ||| ...`, the index 0-based into --src (Moses's n-best format).
ScoreInput read_n_best(const ScoreArgs& a) {
  ScoreInput in;
  in.sources = nmt::lines_of_file_text(nmt::read_text_file(a.src), a.src);
  in.n_best_lines = nmt::lines_of_file_text(nmt::read_text_file(a.n_best), a.n_best);
  const std::string sep = " ||| ";
  for (size_t k = 0; k < in.n_best_lines.size(); ++k) {
    const std::string& line = in.n_best_lines[k];
    const size_t first = line.find(sep);
    const std::string where = str("score: --n-best ", a.n_best, " line ", k + 1);
    if (first == std::string::npos)
      LUONG_FAIL(where, " is not 'index ||| hypothesis ||| ...' (no ' ||| ' in '", line.substr(0, 60), "')");
    const std::string index = line.substr(0, first);
    size_t i = 0;
    const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), i);
    if (ec != std::errc() || end != index.data() + index.size() || index.empty())
      LUONG_FAIL(where, ": the index '", index.substr(0, 40), "' is not a number of a --src line (0-based)");
    if (i >= in.sources.size())
      LUONG_FAIL(where, ": index ", i, " is past the ", in.sources.size(), " lines of ", a.src,
                 " (indices are 0-based)");
    const size_t second = line.find(sep, first + sep.size());
    in.targets.push_back(
        line.substr(first + sep.size(), second == std::string::npos ? std::string::npos : second - first - sep.size()));
    in.its_source.push_back(i);
  }
  return in;
}

std::string fixed(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

void run(ScoreArgs a) {
  if (a.batch_size < 1) LUONG_FAIL("--batch-size must be >= 1, got ", a.batch_size);
  // The input first: its errors should not wait for a large checkpoint to load.
  const ScoreInput input = a.n_best.empty() ? read_targets(a) : read_n_best(a);
  if (input.targets.empty()) LUONG_FAIL("score: ", a.n_best.empty() ? a.src : a.n_best, " is empty (no lines)");
  nmt::Translator translator(a.checkpoints, Device::parse(a.device));
  if (a.batch_size_option->count() == 0) a.batch_size = translator.config().eval.batch_size;
  use_trained_precision(translator);
  nmt::ParallelText text = pairs_with_a_source(input);
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
  for (size_t i = 0; i < scores.size(); ++i) {
    // Checkpoints with non-finite parameters are refused as they load; finite ones whose logits overflow could
    // still give one, which printed would read like a blank source's "nan".
    if (!std::isfinite(scores[i].log_prob))
      LUONG_FAIL("score: the model gives line ", corpus.examples[i].line, " the log-probability ", scores[i].log_prob,
                 " (the logits of ", a.checkpoints.size() > 1 ? "a member" : a.checkpoints.front(), " overflow)");
    by_line[static_cast<size_t>(corpus.examples[i].line - 1)] = &scores[i];
  }
  double log_prob = 0.0;
  int64_t tokens = 0;
  for (size_t k = 0; k < by_line.size(); ++k) {
    const nmt::PairScore* s = by_line[k];
    if (s) log_prob += s->log_prob, tokens += s->tokens;
    if (a.json) {
      nlohmann::json row{{"line", k + 1}, {"log_prob", nullptr}, {"tokens", 0}, {"per_token", nullptr}};
      if (!a.n_best.empty()) row["index"] = input.its_source[k];
      if (s) row["log_prob"] = s->log_prob, row["tokens"] = s->tokens, row["per_token"] = s->log_prob / s->tokens;
      std::cout << json_text(row) << "\n";
      continue;
    }
    const std::string value =
        s ? fixed(a.normalize ? s->log_prob / static_cast<double>(s->tokens) : s->log_prob) : "nan";
    if (a.n_best.empty())
      std::cout << value << "\n";
    else
      std::cout << input.n_best_lines[k] << " ||| " << value << "\n";
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
  auto* tgt =
      cmd->add_option("--tgt", args->tgt, "Target sentences to score, one per source line")->check(CLI::ExistingFile);
  auto* n_best = cmd->add_option("--n-best", args->n_best,
                                 "Instead of --tgt: an n-best list ('index ||| hypothesis ||| ...' lines, the index "
                                 "0-based into --src, as luong translate --n-best prints them); each line is printed "
                                 "back with ' ||| score' appended")
                     ->check(CLI::ExistingFile);
  tgt->excludes(n_best);
  n_best->excludes(tgt);
  cmd->callback([args, tgt, n_best] {
    if (tgt->count() == 0 && n_best->count() == 0)
      throw CLI::RequiredError("one of --tgt (a target per source line) or --n-best (an n-best list)");
    run(*args);
  });
  cmd->add_option("--device", args->device, "cpu, cuda or cuda:N")->capture_default_str();
  args->batch_size_option = cmd->add_option("--batch-size", args->batch_size,
                                            "Pairs scored together, >= 1 (default: the checkpoint's eval.batch_size)");
  cmd->add_flag("--normalize", args->normalize,
                "Print the log-probability per target token (the sentence's pieces and </s>) instead of its sum");
  cmd->add_flag("--json", args->json,
                "One JSON object per line: line, log_prob, tokens, per_token (null for a blank source), and index "
                "with --n-best");
  cmd->add_flag("--progress", args->progress, "Progress lines on stderr even when it is not a terminal");
});

}  // namespace
}  // namespace luong::cli
