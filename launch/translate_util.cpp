#include "launch/translate_util.h"

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "framework/io/heatmap.h"

namespace luong::cli {
namespace {

// The best hypothesis' attention (its tokens plus </s>) against the source tokens.
void write_translation_heatmap(const std::string& path, const nmt::Translation& tr) {
  std::vector<std::string> tgt = tr.tgt_tokens;
  if (tr.attention.size() > tgt.size()) tgt.push_back("</s>");
  const int64_t rows = static_cast<int64_t>(tgt.size()), cols = static_cast<int64_t>(tr.src_tokens.size());
  if (rows == 0 || cols == 0) return;  // nothing to draw for an empty sentence
  std::vector<double> w(static_cast<size_t>(rows * cols));
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t s = 0; s < cols; ++s) w[static_cast<size_t>(t * cols + s)] = tr.attention[static_cast<size_t>(t)][static_cast<size_t>(s)];
  write_attention_heatmap(path, Tensor::from(w, {rows, cols}), tr.src_tokens, tgt);
}

}  // namespace

void add_translate_options(CLI::App& cmd, TranslateArgs& a) {
  cmd.add_option("--checkpoint", a.checkpoint, "Checkpoint file (e.g. run/best.h5)")->required()->check(CLI::ExistingFile);
  cmd.add_option("--device", a.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd.add_option("--beam", a.beam, "Beam size (1 = greedy)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--length-penalty", a.length_penalty, "GNMT length-normalisation alpha (0 = none)")->capture_default_str();
  cmd.add_option("--max-len-ratio", a.max_len_ratio, "Output length limit as a multiple of the source length")->capture_default_str();
  cmd.add_option("--batch-size", a.batch_size, "Sentences decoded together")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--n-best", a.n_best, "Hypotheses printed per sentence (translate)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_flag("--unk-replace", a.unk_replace, "Replace <unk> with the most-attended source word (Luong et al. 2015)");
  cmd.add_option("--dictionary", a.dictionary, "With --unk-replace: 'source<TAB>target' lines to translate that word")
      ->check(CLI::ExistingFile);
  cmd.add_option("--attention-plot", a.attention_plot, "Directory for attention heatmaps (PNG) of the first sentences");
  cmd.add_option("--plot-count", a.plot_count, "How many sentences --attention-plot draws")->capture_default_str();
}

nmt::TranslateOptions translate_options(const TranslateArgs& a) {
  nmt::TranslateOptions o;
  o.beam.beam_size = a.beam;
  o.beam.length_penalty = a.length_penalty;
  o.beam.max_len_ratio = a.max_len_ratio;
  o.beam.n_best = std::min(a.n_best, a.beam);
  o.beam.keep_attention = !a.attention_plot.empty();
  o.unk_replace = a.unk_replace;
  if (!a.dictionary.empty()) o.dictionary = nmt::read_dictionary(a.dictionary);
  o.batch_size = a.batch_size;
  return o;
}

std::vector<nmt::Translation> translate_with_progress(const nmt::Translator& translator,
                                                      const std::vector<std::string>& sentences,
                                                      const TranslateArgs& args, bool progress) {
  const nmt::TranslateOptions o = translate_options(args);
  std::vector<nmt::Translation> out;
  out.reserve(sentences.size());
  // Chunks of several batches: progress lines without slowing decoding down.
  const size_t chunk = static_cast<size_t>(args.batch_size) * 4;
  for (size_t start = 0; start < sentences.size(); start += chunk) {
    const size_t end = std::min(sentences.size(), start + chunk);
    std::vector<std::string> part(sentences.begin() + static_cast<std::ptrdiff_t>(start),
                                  sentences.begin() + static_cast<std::ptrdiff_t>(end));
    for (auto& t : translator.translate(part, o)) out.push_back(std::move(t));
    if (progress) std::cerr << "translated " << end << "/" << sentences.size() << " sentences\n";
  }
  return out;
}

void write_attention_plots(const TranslateArgs& args, const std::vector<nmt::Translation>& translations) {
  if (args.attention_plot.empty()) return;
  std::filesystem::create_directories(args.attention_plot);
  const size_t n = std::min(translations.size(), static_cast<size_t>(args.plot_count));
  for (size_t i = 0; i < n; ++i) write_translation_heatmap(args.attention_plot + "/" + std::to_string(i + 1) + ".png", translations[i]);
}

}  // namespace luong::cli
