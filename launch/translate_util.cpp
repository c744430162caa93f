#include "launch/translate_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "framework/core/error.h"
#include "framework/core/precision.h"
#include "framework/io/heatmap.h"

namespace luong::cli {
namespace {

// The best hypothesis' attention (its tokens plus </s>) against the source tokens; Translator gives the
// columns in source order even for a reverse_source model, so they match the labels.
void write_translation_heatmap(const std::string& path, const nmt::Translation& tr) {
  std::vector<std::string> tgt = tr.tgt_tokens;
  if (tr.attention.size() > tgt.size()) tgt.push_back("</s>");
  const int64_t rows = static_cast<int64_t>(tgt.size()), cols = static_cast<int64_t>(tr.src_tokens.size());
  if (rows == 0 || cols == 0) return;  // nothing to draw for an empty sentence
  std::vector<double> w(static_cast<size_t>(rows * cols));
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t s = 0; s < cols; ++s)
      w[static_cast<size_t>(t * cols + s)] = tr.attention[static_cast<size_t>(t)][static_cast<size_t>(s)];
  write_attention_heatmap(path, Tensor::from(w, {rows, cols}), tr.src_tokens, tgt);
}

}  // namespace

void add_translate_options(CLI::App& cmd, TranslateArgs& a, bool for_translate) {
  // Ranges are checked by validate_translate_args, not CLI11 validators: CLI11's range message
  // ("Value 0 not in range 0.000000 to 1.797693e+308") does not say what is allowed.
  cmd.add_option("--checkpoint", a.checkpoints,
                 "Checkpoint file (e.g. run/best.h5); several (--checkpoint a.h5 b.h5) decode as an ensemble, the "
                 "mean of their probabilities")
      ->required()
      ->check(CLI::ExistingFile);
  cmd.add_option("--device", a.device, "cpu, cuda or cuda:N")->capture_default_str();
  a.beam_option = cmd.add_option(
      "--beam", a.beam, str("Beam size, 1 (greedy) to ", kMaxBeam, " (default: the checkpoint's eval.beam_size)"));
  a.length_penalty_option =
      cmd.add_option("--length-penalty", a.length_penalty,
                     "GNMT length-normalisation alpha >= 0, 0 = none (default: the checkpoint's eval.length_penalty)");
  a.max_len_ratio_option = cmd.add_option("--max-len-ratio", a.max_len_ratio,
                                          str("Output length limit as a multiple (0.1 to ", kMaxLenRatio,
                                              ") of the source length (default: the checkpoint's eval.max_len_ratio)"));
  a.batch_size_option = cmd.add_option("--batch-size", a.batch_size,
                                       "Sentences decoded together, >= 1 (default: the checkpoint's eval.batch_size)");
  if (for_translate) {
    cmd.add_option("--n-best", a.n_best, "Hypotheses printed per sentence (1 to --beam; with --sample, samples drawn)")
        ->capture_default_str();
    CLI::Option* sample =
        cmd.add_flag("--sample", a.sample,
                     "Draw each translation from the model's distribution instead of searching for the most probable "
                     "one (sampled back-translation; --n-best N draws N per sentence), reproducibly from --seed");
    cmd.add_option("--sample-topk", a.sample_topk, "With --sample: draw among the K most probable tokens only, 0 = all")
        ->needs(sample)
        ->capture_default_str();
    cmd.add_option("--temperature", a.temperature,
                   "With --sample: p^(1/T) renormalised; below 1 sharper, above 1 flatter (0 < T <= 100)")
        ->needs(sample)
        ->capture_default_str();
    cmd.add_option("--seed", a.seed,
                   "With --sample: the draws' seed (a sentence's samples depend on it, the model and the sentence's "
                   "line number alone)")
        ->needs(sample)
        ->capture_default_str();
    auto* mbr = cmd.add_flag("--mbr", a.mbr,
                             "Print for each sentence the one of its --n-best candidates (samples with --sample, else "
                             "the beam's hypotheses) with the highest mean utility (--mbr-utility) against the others: "
                             "minimum-Bayes-risk decoding");
    cmd.add_option("--mbr-utility", a.mbr_utility,
                   "With --mbr: the utility, sentence chrF (chrf) or sentence BLEU with 'exp' smoothing (bleu)")
        ->needs(mbr)
        ->capture_default_str();
    cmd.add_option("--alignment", a.alignment,
                   "Append ' ||| ' and word alignments 'i-j' (source word i, target word j, 0-based) read off the "
                   "attention: 'hard' (each target word to its most-attended source word) or a threshold in (0, 1] "
                   "(every pair with at least that weight)")
        ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty value") : ""; }, "MODE",
                               "non-empty"));
  }
  cmd.add_flag("--unk-replace", a.unk_replace, "Replace <unk> with the most-attended source word (Luong et al. 2015)");
  cmd.add_option("--dictionary", a.dictionary,
                 "With --unk-replace: 'source<TAB>target' lines (one per source word) to translate that word")
      ->check(CLI::ExistingFile);
  cmd.add_option("--attention-plot", a.attention_plot, "Directory for attention heatmaps (PNG) of the first sentences")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty directory name") : ""; },
                             "DIR", "non-empty"));
  cmd.add_option("--plot-count", a.plot_count, "How many sentences --attention-plot draws (>= 0)")
      ->capture_default_str();
  cmd.add_flag("--progress", a.progress, "Progress lines on stderr even when it is not a terminal");
}

void use_trained_precision(const nmt::Translator& translator) {
  set_gemm_precision(parse_gemm_precision(translator.config().train.precision));
}

void validate_translate_args(const TranslateArgs& a) {
  if (a.beam < 1) LUONG_FAIL("--beam must be >= 1, got ", a.beam);
  if (a.beam > kMaxBeam)
    LUONG_FAIL("--beam must be at most ", kMaxBeam, ", got ", a.beam, " (wider beams need memory for every beam "
               "entry and do not translate better)");
  // The same bounds as eval.length_penalty and eval.max_len_ratio in the config schema.
  if (!std::isfinite(a.length_penalty) || a.length_penalty < 0.0)
    LUONG_FAIL("--length-penalty must be a finite number >= 0 (0 = no length normalisation), got ", a.length_penalty);
  if (!std::isfinite(a.max_len_ratio) || a.max_len_ratio < 0.1 || a.max_len_ratio > kMaxLenRatio)
    LUONG_FAIL("--max-len-ratio must be a finite number from 0.1 to ", kMaxLenRatio, ", got ", a.max_len_ratio,
               " (the output length limit is this multiple of the source length)");
  if (a.batch_size < 1) LUONG_FAIL("--batch-size must be >= 1, got ", a.batch_size);
  if (a.n_best < 1) LUONG_FAIL("--n-best must be >= 1, got ", a.n_best);
  if (a.sample) {
    if (a.beam_option && a.beam_option->count() > 0)
      LUONG_FAIL(
          "--beam does not apply with --sample, which draws each translation (--n-best N draws N per "
          "sentence)");
    if (!std::isfinite(a.temperature) || a.temperature <= 0.0 || a.temperature > 100.0)
      LUONG_FAIL("--temperature must be a number greater than 0 and at most 100, got ", a.temperature);
    if (a.sample_topk < 0) LUONG_FAIL("--sample-topk must be >= 0 (0 = the whole vocabulary), got ", a.sample_topk);
    if (a.n_best > kMaxBeam) LUONG_FAIL("--n-best must be at most ", kMaxBeam, " with --sample, got ", a.n_best);
  }
  if (a.mbr_utility != "chrf" && a.mbr_utility != "bleu")
    LUONG_FAIL("--mbr-utility must be chrf or bleu, got '", a.mbr_utility, "'");
  if (a.mbr && a.n_best < 2)
    LUONG_FAIL(
        "--mbr chooses among each sentence's --n-best candidates: pass --n-best 2 or more (e.g. --sample "
        "--n-best 16)");
  // Beam search keeps --beam hypotheses per sentence: more cannot be printed.
  if (!a.sample && a.n_best > a.beam)
    LUONG_FAIL("--n-best must be at most --beam (", a.beam, "), got ", a.n_best, "; pass --beam ", a.n_best,
               " or more for ", a.n_best, " hypotheses");
  if (!a.dictionary.empty() && !a.unk_replace)
    LUONG_FAIL("--dictionary needs --unk-replace (the dictionary translates the source words that replace <unk>)");
  if (a.plot_count < 0) LUONG_FAIL("--plot-count must be >= 0, got ", a.plot_count);
  alignment_threshold(a);
}

double alignment_threshold(const TranslateArgs& a) {
  return a.alignment.empty() ? 0.0 : parse_alignment_mode(a.alignment);
}

double parse_alignment_mode(const std::string& mode) {
  if (mode == "hard") return 0.0;
  double t = 0.0;
  size_t used = 0;
  try {
    t = std::stod(mode, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != mode.size() || !std::isfinite(t) || t <= 0.0 || t > 1.0)
    LUONG_FAIL("--alignment must be 'hard' or a weight threshold greater than 0 and at most 1, got '", mode, "'");
  return t;
}

void apply_checkpoint_decoding(TranslateArgs& a, const nmt::EvalConfig& eval) {
  if (a.beam_option && a.beam_option->count() == 0) a.beam = eval.beam_size;
  if (a.length_penalty_option && a.length_penalty_option->count() == 0) a.length_penalty = eval.length_penalty;
  if (a.max_len_ratio_option && a.max_len_ratio_option->count() == 0) a.max_len_ratio = eval.max_len_ratio;
  if (a.batch_size_option && a.batch_size_option->count() == 0) a.batch_size = eval.batch_size;
  validate_translate_args(a);  // e.g. --n-best against the checkpoint's beam
}

PassProgress::PassProgress(std::string what, size_t total, bool forced)
    : what_(std::move(what)), total_(total), enabled_(forced || isatty(STDERR_FILENO) != 0) {}

void PassProgress::update(size_t done) {
  if (!enabled_) return;
  // Every few seconds at most: enough to show a long pass is alive without flooding a log.
  constexpr auto kEvery = std::chrono::seconds(3);
  const auto now = std::chrono::steady_clock::now();
  if (reported_ && (total_ == 0 || done < total_) && now - last_ < kEvery) return;
  reported_ = true;
  last_ = now;
  line_.message(total_ == 0 ? str(what_, " ", done, " sentences") : str(what_, " ", done, "/", total_, " sentences"));
}

nmt::TranslateOptions translate_options(const TranslateArgs& a) {
  nmt::TranslateOptions o;
  o.beam.beam_size = a.beam;
  o.beam.length_penalty = a.length_penalty;
  o.beam.max_len_ratio = a.max_len_ratio;
  o.beam.n_best = a.n_best;  // <= beam: validate_translate_args
  o.beam.keep_attention = !a.attention_plot.empty() || !a.alignment.empty();
  o.unk_replace = a.unk_replace;
  if (!a.dictionary.empty()) o.dictionary = nmt::read_dictionary(a.dictionary);
  o.batch_size = a.batch_size;
  o.sampling = {a.sample, a.temperature, a.sample_topk, a.seed};
  o.mbr = a.mbr;
  o.mbr_utility = nmt::parse_mbr_utility(a.mbr_utility);
  return o;
}

std::vector<nmt::Translation> translate_with_progress(const nmt::Translator& translator,
                                                      const std::vector<std::string>& sentences,
                                                      const TranslateArgs& args, const std::string& what) {
  const nmt::TranslateOptions o = translate_options(args);
  const size_t n = sentences.size();
  std::vector<nmt::Translation> out(n);
  PassProgress progress(what, n, args.progress);
  progress.update(0);
  // The whole input in order of length, so every batch holds sentences of similar length (the translator
  // sorts within what it is given, here a chunk); the results go back to the input order.
  std::vector<size_t> tokens(n), order(n);
  for (size_t i = 0; i < n; ++i) tokens[i] = translator.tokenizer().tokenize(sentences[i]).size(), order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tokens[a] < tokens[b]; });
  // Chunks of several batches: progress lines without slowing decoding down.
  const size_t chunk = static_cast<size_t>(args.batch_size) * 4;
  for (size_t start = 0; start < n; start += chunk) {
    const size_t end = std::min(n, start + chunk);
    std::vector<std::string> part;
    for (size_t k = start; k < end; ++k) part.push_back(sentences[order[k]]);
    std::vector<nmt::Translation> done = translator.translate(part, o);
    for (size_t k = start; k < end; ++k) out[order[k]] = std::move(done[k - start]);
    progress.update(end);
  }
  return out;
}

void prepare_attention_plot_dir(const TranslateArgs& args) {
  if (args.attention_plot.empty()) return;
  namespace fs = std::filesystem;
  const std::string& dir = args.attention_plot;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    LUONG_FAIL("--attention-plot ", dir, " exists and is not a directory; name a directory for the heatmaps");
  fs::create_directories(dir, ec);
  if (ec) LUONG_FAIL("--attention-plot ", dir, ": cannot create the directory: ", ec.message());
  // An existing directory may refuse files (permissions, a read-only mount): found by writing one now, not
  // after the whole input has been decoded.
  const std::string probe = (fs::path(dir) / (".luong-write-test." + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) LUONG_FAIL("--attention-plot ", dir, ": cannot write there: ", std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_attention_plots(const TranslateArgs& args, const std::vector<nmt::Translation>& translations) {
  if (args.attention_plot.empty()) return;
  prepare_attention_plot_dir(args);  // again: it may have gone while decoding
  // Each token is a 16-pixel cell with its label: past a few hundred a side the image is tens of thousands
  // of pixels wide (a 10,000-token line made a 160,000-pixel PNG and half a GB of memory), legible to no one.
  constexpr size_t kMaxPlotTokens = 300;
  const size_t n = std::min(translations.size(), static_cast<size_t>(args.plot_count));
  for (size_t i = 0; i < n; ++i) {
    const nmt::Translation& tr = translations[i];
    if (tr.src_tokens.size() > kMaxPlotTokens || tr.attention.size() > kMaxPlotTokens) {
      std::cerr << "luong: warning: no attention plot for sentence " << i + 1 << " (" << tr.src_tokens.size()
                << " source x " << tr.attention.size() << " target tokens; plots are drawn up to " << kMaxPlotTokens
                << " a side)\n";
      continue;
    }
    write_translation_heatmap(args.attention_plot + "/" + std::to_string(i + 1) + ".png", tr);
  }
}

}  // namespace luong::cli
