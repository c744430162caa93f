// `luong align`: word alignments of given translations, read off a checkpoint's attention while it is forced to
// produce them (each step fed the reference's previous word), as Luong et al. (2015, §5.4) measure how well their
// attention models align; with --gold, the alignment error rate against hand alignments.
//   luong align --checkpoint run/best.h5 --src test.de --tgt test.en [--alignment hard|T] [--gold test.align] [--json]
// One line of "i-j" links per pair on stdout (fast_align's form, 0-based words of the --src and --tgt lines;
// an empty line for a blank source, which has nothing to attend to); the summary on stderr. --json: JSON lines
// on stdout instead, one {"type": "pair"} record per pair and a {"type": "summary"} record at the end (the
// "type" field as in metrics.jsonl), for scripts that compare checkpoints by their AER.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "framework/io/json_text.h"
#include "launch/commands.h"
#include "launch/sentence_pairs.h"
#include "launch/translate_util.h"
#include "models/nmt/alignment_error_rate.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/forced_attention.h"
#include "models/nmt/translator.h"
#include "models/nmt/word_alignment.h"

namespace luong::cli {
namespace {

struct AlignArgs {
  std::vector<std::string> checkpoints;
  std::string device = "cpu";
  std::string src, tgt, gold;
  std::string alignment = "hard";
  bool gold_one_based = false, gold_reversed = false, progress = false, json = false;
  int64_t batch_size = 32;
  CLI::Option* batch_size_option = nullptr;  // not given: the checkpoint's eval.batch_size
};

// The gold links of every line, checked before the checkpoint is read.
std::vector<nmt::GoldAlignment> read_gold(const AlignArgs& a, size_t lines) {
  const std::vector<std::string> text = nmt::lines_of_file_text(nmt::read_text_file(a.gold), a.gold);
  if (text.size() != lines)
    LUONG_FAIL("align: --gold ", a.gold, " has ", text.size(), " lines but ", a.src, " has ", lines,
               " (one line of links per sentence pair)");
  std::vector<nmt::GoldAlignment> gold;
  for (size_t k = 0; k < text.size(); ++k) {
    nmt::GoldAlignment g =
        nmt::parse_gold_alignment(text[k], a.gold_one_based, str("align: --gold ", a.gold, " line ", k + 1));
    gold.push_back(a.gold_reversed ? nmt::reversed(g) : std::move(g));
  }
  return gold;
}

void run(AlignArgs a) {
  if (a.batch_size < 1) LUONG_FAIL("--batch-size must be >= 1, got ", a.batch_size);
  const double threshold = parse_alignment_mode(a.alignment);
  // The input first: its errors should not wait for a large checkpoint to load.
  const SentencePairs pairs = read_line_aligned(a.src, a.tgt, "align");
  const std::vector<std::string>& sources = pairs.sources;
  if (sources.empty()) LUONG_FAIL("align: ", a.src, " is empty (no lines)");
  const std::vector<nmt::GoldAlignment> gold =
      a.gold.empty() ? std::vector<nmt::GoldAlignment>{} : read_gold(a, sources.size());

  nmt::Translator translator(a.checkpoints, Device::parse(a.device));
  if (a.batch_size_option->count() == 0) a.batch_size = translator.config().eval.batch_size;
  use_trained_precision(translator);
  nmt::ParallelText text = pairs_with_a_source(pairs);
  const int64_t blank_sources = text.empty_skipped;
  const nmt::TokenizedCorpus tokens =
      nmt::tokenize_corpus(std::move(text), translator.tokenizer().options(), translator.subwords());
  const nmt::Corpus corpus = nmt::encode_corpus(tokens, translator.src_vocab(), translator.tgt_vocab(), 0);
  LUONG_CHECK(corpus.examples.size() == tokens.line_numbers.size(), "align: every pair is kept (no length limit)");
  PassProgress progress("align", corpus.examples.size(), a.progress);
  progress.update(0);
  const auto attention = nmt::forced_attention(translator.ensemble(), corpus, a.batch_size, translator.device(),
                                               [&](size_t done) { progress.update(done); });

  // Pair i of the corpus is line tokens.line_numbers[i]; a blank source has no links (an empty line, null in JSON).
  std::vector<std::optional<std::vector<std::pair<int, int>>>> links_of_line(sources.size());
  nmt::AerCounts counts;
  for (size_t i = 0; i < corpus.examples.size(); ++i) {
    const size_t k = static_cast<size_t>(tokens.line_numbers[i] - 1);
    const std::vector<std::string> src = tokens.strings(tokens.src, i), tgt = tokens.strings(tokens.tgt, i);
    const auto weights =
        nmt::word_attention(translator.tokenizer(), src, tgt,
                            nmt::attention_in_source_order(attention[i], translator.config().model.reverse_source));
    const auto links = nmt::word_links(weights, threshold);
    links_of_line[k] = links;
    if (gold.empty()) continue;
    const int src_words = nmt::word_count(translator.tokenizer().detokenize(src));
    const int tgt_words = static_cast<int>(weights.size());
    for (const auto& [s, t] : gold[k].possible)
      if (s >= src_words || t >= tgt_words)
        LUONG_FAIL("align: --gold ", a.gold, " line ", k + 1, ": the link ", s, "-", t, " is past the pair's ",
                   src_words, " source and ", tgt_words, " target words",
                   a.gold_reversed    ? " (read target-first, --gold-reversed)"
                   : a.gold_one_based ? " (counted from 1 in the file)"
                                      : " (counted from 0; --gold-one-based if the file counts from 1)");
    counts.add(nmt::Links(links.begin(), links.end()), gold[k]);
  }
  if (!gold.empty())
    for (size_t k = 0; k < gold.size(); ++k)  // the blank sources' gold links count as missed
      if (nmt::is_blank_line(sources[k])) counts.add({}, gold[k]);
  if (a.json) {
    for (size_t k = 0; k < links_of_line.size(); ++k) {
      nlohmann::json row{{"type", "pair"}, {"line", k + 1}, {"links", nullptr}};
      if (links_of_line[k]) row["links"] = *links_of_line[k];  // [[i, j], ...]
      std::cout << json_text(row) << "\n";
    }
    nlohmann::json summary{{"type", "summary"},
                           {"pairs", corpus.examples.size()},
                           {"blank_sources", blank_sources},
                           {"alignment", a.alignment},
                           {"aer", nullptr},
                           {"precision", nullptr},
                           {"recall", nullptr},
                           {"proposed", nullptr},
                           {"sure", nullptr}};
    if (!gold.empty()) {
      summary["aer"] = counts.aer(), summary["precision"] = counts.precision(), summary["recall"] = counts.recall();
      summary["proposed"] = counts.proposed, summary["sure"] = counts.sure;
    }
    std::cout << json_text(summary) << "\n";
  } else {
    for (const auto& links : links_of_line) std::cout << (links ? nmt::format_links(*links) : std::string()) << "\n";
  }
  flush_stdout();
  std::cerr << "align: " << corpus.examples.size() << " pairs";
  if (!gold.empty()) {
    std::cerr << std::fixed << std::setprecision(4) << ", AER " << counts.aer() << " (precision " << counts.precision()
              << ", recall " << counts.recall() << "; " << counts.proposed << " links proposed, " << counts.sure
              << " sure)";
  }
  std::cerr << "\n";
  if (blank_sources > 0)
    std::cerr << "luong: warning: " << blank_sources << " of " << sources.size()
              << " lines have a blank source and no alignment (printed as an empty line)\n";
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<AlignArgs>();
  auto* cmd = app.add_subcommand("align",
                                 "Word alignments of given translations from a checkpoint's attention (forced "
                                 "decoding), and their error rate against hand alignments");
  cmd->add_option("--checkpoint", args->checkpoints,
                  "Checkpoint file; several: an ensemble, whose attention is its first model's")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--src", args->src, "Source sentences, one per line")->required()->check(CLI::ExistingFile);
  cmd->add_option("--tgt", args->tgt, "Their translations, one per source line")->required()->check(CLI::ExistingFile);
  cmd->add_option("--alignment", args->alignment,
                  "'hard' (each target word to its most-attended source word) or a threshold in (0, 1] (every "
                  "pair with at least that weight)")
      ->capture_default_str();
  cmd->add_option("--gold", args->gold,
                  "Hand alignments, one line of links per pair: 'i-j' sure, 'i?j' or 'ipj' possible (0-based source "
                  "word i, target word j); prints the alignment error rate")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--gold-one-based", args->gold_one_based, "The --gold file counts words from 1");
  cmd->add_flag("--gold-reversed", args->gold_reversed,
                "The --gold file lists target-source links ('j-i'), as a gold set made for the other direction does");
  cmd->add_option("--device", args->device, "cpu, cuda or cuda:N")->capture_default_str();
  args->batch_size_option = cmd->add_option("--batch-size", args->batch_size,
                                            "Pairs aligned together, >= 1 (default: the checkpoint's eval.batch_size)");
  cmd->add_flag(
      "--json", args->json,
      "JSON lines on stdout: {\"type\": \"pair\", \"line\", \"links\": [[i, j], ...]} per pair (null links for "
      "a blank source), then {\"type\": \"summary\", \"pairs\", \"aer\", \"precision\", \"recall\", "
      "\"proposed\", \"sure\", ...} (null scores without --gold)");
  cmd->add_flag("--progress", args->progress, "Progress lines on stderr even when it is not a terminal");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
