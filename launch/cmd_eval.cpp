// `luong eval`: perplexity (teacher-forced) and BLEU of beam-search translations of a checkpoint, or of an
// ensemble of checkpoints.
//   luong eval --checkpoint run/best.h5 [more.h5 ...] --src test.en --ref test.de [--beam 5] [--json]
//              [--confidence] [--output translations.txt]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/io/json_text.h"
#include "framework/io/write_file.h"
#include "launch/commands.h"
#include "launch/confidence_options.h"
#include "launch/translate_util.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"
#include "models/nmt/data/batching.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/ensemble_loss.h"
#include "models/nmt/nmt_task.h"
#include "models/nmt/scores_by_length.h"
#include "models/nmt/significance/metric_rows.h"
#include "models/nmt/significance/paired_tests.h"

namespace luong::cli {
namespace {

struct EvalArgs {
  TranslateArgs t;
  std::string src, ref;
  std::vector<std::string> more_refs;  // --ref's further files: more references per sentence for BLEU and chrF
  bool json = false;
  int chrf_word_order = 0;  // 2: chrF++
  CLI::Option* chrf_word_order_option = nullptr;  // not given: the checkpoint's eval.chrf_word_order
  std::string output;       // --output: the translations, for luong bleu -i ... --paired-bs
  ConfidenceOptions confidence;  // bootstrap estimates of BLEU and chrF
  int64_t by_length = 0;         // --by-length W: BLEU and chrF by source length, W words a bucket; 0 = none
};

// --confidence: the bootstrap estimate of one metric's score on these translations (luong bleu --confidence's).
std::optional<bleu::ConfidenceEstimate> estimate(const EvalArgs& a, const significance::MetricRows& rows) {
  if (!a.confidence.enabled) return std::nullopt;
  const significance::Estimate e = significance::bootstrap_confidence(rows, a.confidence.resamples);
  return bleu::ConfidenceEstimate{a.confidence.resamples, significance::kDefaultSeed, e.mean, e.ci};
}

// --output must be writable and must not be one of the command's inputs: the translations would replace the
// test set or a reference (or a checkpoint) once decoding ends.
void check_eval_output(const EvalArgs& a) {
  check_output_path(a.output, "eval: --output");
  std::vector<std::pair<std::string, std::string>> inputs{{"--src", a.src}, {"--ref", a.ref}};
  for (const std::string& r : a.more_refs) inputs.emplace_back("--more-refs", r);
  for (const std::string& c : a.t.checkpoints) inputs.emplace_back("--checkpoint", c);
  std::error_code ec;
  for (const auto& [option, path] : inputs)
    if (std::filesystem::equivalent(a.output, path, ec))
      LUONG_FAIL("eval: --output ", a.output, " is the ", option, " file ", path,
                 "; the translations would replace it: write them to another file");
}

// The teacher-forced loss over every pair, in length-sorted chunks of a few batches so a progress line can
// follow a long test set (the summed loss does not depend on how pairs are grouped).
ValidationResult perplexity_pass(const nmt::Translator& translator, const nmt::Corpus& corpus, const TranslateArgs& t) {
  std::vector<size_t> sorted(corpus.examples.size());
  for (size_t i = 0; i < sorted.size(); ++i) sorted[i] = i;
  // The order evaluate_loss sorts each chunk into, so the chunks cut the same batches as a validation pass.
  std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    return nmt::sorts_before(corpus.examples[a], corpus.examples[b], nmt::SortKey::longer_side);
  });
  const size_t chunk = static_cast<size_t>(t.batch_size) * 4;
  PassProgress progress("eval: perplexity", sorted.size(), t.progress);
  progress.update(0);
  ValidationResult total;
  for (size_t start = 0; start < sorted.size(); start += chunk) {
    nmt::Corpus part;
    const size_t end = std::min(sorted.size(), start + chunk);
    for (size_t k = start; k < end; ++k) part.examples.push_back(corpus.examples[sorted[k]]);
    const ValidationResult r = nmt::evaluate_loss(translator.ensemble(), part, t.batch_size, translator.device());
    total.loss_sum += r.loss_sum;
    total.tokens += r.tokens;
    progress.update(end);
  }
  return total;
}

// The reference as sacreBLEU reads it (from the file's text, read once), with the file reader's errors.
std::vector<std::string> read_reference(const std::string& text, const std::string& path) {
  nmt::check_no_nul(text, "file '" + path + "'");
  std::istringstream in(text);
  return bleu::read_lines(in, path);
}

void run(EvalArgs a) {
  validate_translate_args(a.t);
  prepare_attention_plot_dir(a.t);
  if (!a.output.empty()) check_eval_output(a);  // before the decoding, not after it
  nmt::Translator translator(a.t.checkpoints, Device::parse(a.t.device));
  apply_checkpoint_decoding(a.t, translator.config().eval);
  if (a.chrf_word_order_option->count() == 0) a.chrf_word_order = translator.config().eval.chrf_word_order;
  use_trained_precision(translator);
  // Perplexity over every pair (no length limit: the test set must stay whole).
  // Each file is read once: --src or --ref may be a pipe (/dev/stdin, <(...)), which a second read finds empty.
  const std::string src_text = nmt::read_text_file(a.src), ref_text = nmt::read_text_file(a.ref);
  const std::vector<std::string> sources = nmt::lines_of_file_text(src_text, a.src);
  nmt::ParallelText text = nmt::pair_lines(sources, nmt::lines_of_file_text(ref_text, a.ref), a.src, a.ref);
  // A perplexity and BLEU of nothing would print as 0 and look like a (terrible) result.
  if (text.lines == 0) LUONG_FAIL("eval: test set ", a.src, " is empty (no lines)");
  if (text.src.empty())
    LUONG_FAIL("eval: test set ", a.src, " / ", a.ref, " has no pair where both sides are non-empty (", text.lines,
               " lines)");
  const nmt::Corpus corpus =
      nmt::encode_corpus(nmt::tokenize_corpus(std::move(text), translator.tokenizer().options(), translator.subwords()),
                         translator.src_vocab(), translator.tgt_vocab(), 0);
  const ValidationResult v = perplexity_pass(translator, corpus, a.t);
  const double ppl = std::exp(v.loss_sum / static_cast<double>(v.tokens));
  // BLEU of the translations of every source line against the raw reference lines.
  std::vector<std::vector<std::string>> refs{read_reference(ref_text, a.ref)};
  for (const std::string& path : a.more_refs) {
    refs.push_back(read_reference(nmt::read_text_file(path), path));
    if (refs.back().size() != refs.front().size())
      LUONG_FAIL("eval: reference ", path, " has ", refs.back().size(), " lines but ", a.ref, " has ",
                 refs.front().size(), " (every reference file holds one line per source line)");
  }
  const int nrefs = static_cast<int>(refs.size());
  const auto translations = translate_with_progress(translator, sources, a.t, "eval: decoding");
  std::vector<std::string> hyps;
  for (const auto& tr : translations) hyps.push_back(tr.text);
  write_attention_plots(a.t, translations);
  if (!a.output.empty()) {
    std::string text;
    for (const std::string& h : hyps) text.append(h).append("\n");
    write_file_atomically(a.output, text, "eval: --output");
  }
  bleu::BleuScore score = bleu::corpus_bleu(hyps, refs);
  // Character n-grams: partial credit within words (and word bigrams too for chrF++).
  chrf::ChrfScore chrf_score = chrf::corpus_chrf(hyps, refs, a.chrf_word_order);
  if (a.confidence.enabled) {
    score.confidence = estimate(a, significance::bleu_rows(hyps, refs));
    chrf_score.confidence = estimate(a, significance::chrf_rows(hyps, refs, a.chrf_word_order));
  }
  const std::string bleu_signature = score.signature(), chrf_signature = chrf_score.signature();
  const std::vector<nmt::LengthBucket> by_length =
      a.by_length > 0 ? nmt::scores_by_source_length(sources, hyps, refs, a.by_length, a.chrf_word_order)
                      : std::vector<nmt::LengthBucket>();
  if (a.json) {
    nlohmann::json result{{"checkpoint", a.t.checkpoints.front()},
                          {"src", a.src},
                          {"ref", a.ref},
                          {"sentences", sources.size()},
                          {"tokens", v.tokens},
                          {"ppl", ppl},
                          {"bleu", score.score},
                          {"bleu_signature", bleu_signature},
                          {"bleu_line", score.format()},
                          {"chrf", chrf_score.score},  // chrF2, or chrF2++ with --chrf-word-order 2
                          {"chrf_signature", chrf_signature},
                          {"beam_size", a.t.beam},
                          {"length_penalty", a.t.length_penalty},
                          {"max_len_ratio", a.t.max_len_ratio},
                          {"batch_size", a.t.batch_size}};
    if (a.confidence.enabled) {  // the bootstrap means and 95% half-widths (the signatures say bs and seed)
      result["bleu_mean"] = score.confidence->mean, result["bleu_ci"] = score.confidence->ci;
      result["chrf_mean"] = chrf_score.confidence->mean, result["chrf_ci"] = chrf_score.confidence->ci;
    }
    if (!a.output.empty()) result["output"] = a.output;
    if (a.by_length > 0) result["by_length"] = nmt::length_buckets_json(by_length);
    if (a.t.checkpoints.size() > 1) result["ensemble"] = a.t.checkpoints;  // "checkpoint" is then the first
    if (nrefs > 1) {  // "ref" is then the first, the one perplexity is measured on
      std::vector<std::string> all{a.ref};
      all.insert(all.end(), a.more_refs.begin(), a.more_refs.end());
      result["refs"] = all;
    }
    std::cout << json_text(result) << "\n";
  } else {
    std::cout << "perplexity " << ppl << " over " << v.tokens << " target tokens\n"
              << score.format(2, bleu_signature) << "\n"
              << chrf_score.format(2, chrf_signature) << "\n";
    if (a.by_length > 0) std::cout << "by source length:\n" << nmt::format_length_table(by_length);
  }
  flush_stdout();
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Perplexity, BLEU and chrF (beam search) of a checkpoint on a test set");
  add_translate_options(*cmd, args->t, /*for_translate=*/false);
  cmd->add_option("--src", args->src, "Source sentences, one per line")->required()->check(CLI::ExistingFile);
  cmd->add_option("--ref", args->ref,
                  "Reference translations, one per line (perplexity is measured on them; BLEU and chrF count "
                  "--more-refs too)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--more-refs", args->more_refs,
                  "Further reference files (one line per source line each): BLEU and chrF against all references, "
                  "as sacreBLEU scores several (nrefs in the signatures)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", args->json, "Print one JSON line for scripts");
  args->chrf_word_order_option =
      cmd->add_option("--chrf-word-order", args->chrf_word_order,
                      "Word n-gram order of chrF: 0 (chrF2), 2 (chrF2++, Popovic 2017; its signature says nw:2), as "
                      "luong bleu and sacrebleu take it (default: the checkpoint's eval.chrf_word_order)")
          ->check(CLI::Range(0, chrf::kMaxWordOrder));
  cmd->add_option("--output", args->output,
                  "Also write the translations to this file, one line per source line (compare two checkpoints' with "
                  "luong bleu REF -i A B --paired-bs)");
  cmd->add_option("--by-length", args->by_length,
                  "Also BLEU and chrF of the sentences grouped by source length, this many words a group (1-W, "
                  "W+1-2W, ...), as Luong et al. 2015 analyse them")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  add_confidence_options(*cmd, args->confidence,
                         "Bootstrap mean and 95% confidence interval of BLEU and chrF, as luong bleu --confidence "
                         "(sacrebleu's) gives them");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
