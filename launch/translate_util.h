// Options and helpers shared by `luong translate` and `luong eval`.
#pragma once
#include <string>
#include <vector>

#include "models/nmt/translator.h"

namespace CLI {
class App;
}

namespace luong::cli {

struct TranslateArgs {
  std::string checkpoint;
  std::string device = "cpu";
  int64_t beam = 5;
  double length_penalty = 0.0;
  double max_len_ratio = 2.0;
  int64_t batch_size = 32;
  int64_t n_best = 1;
  bool unk_replace = false;
  std::string dictionary;
  std::string attention_plot;  // directory for heatmaps; "" = none
  int64_t plot_count = 10;
};

void add_translate_options(CLI::App& cmd, TranslateArgs& args);
nmt::TranslateOptions translate_options(const TranslateArgs& args);
// Translates in batches, reporting progress on stderr when `progress` is set.
std::vector<nmt::Translation> translate_with_progress(const nmt::Translator& translator,
                                                      const std::vector<std::string>& sentences,
                                                      const TranslateArgs& args, bool progress);
// Writes attention_plot/<n>.png for the first plot_count translations (when attention_plot is set).
void write_attention_plots(const TranslateArgs& args, const std::vector<nmt::Translation>& translations);

}  // namespace luong::cli
