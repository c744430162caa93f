// Options and helpers shared by `luong translate` and `luong eval`.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "framework/train/progress.h"
#include "models/nmt/translator.h"

namespace CLI {
class App;
class Option;
}

namespace luong::cli {

struct TranslateArgs {
  std::vector<std::string> checkpoints;  // several: an ensemble (models/nmt/ensemble.h)
  std::string device = "cpu";
  int64_t beam = 5;
  double length_penalty = 0.0;
  double max_len_ratio = 2.0;
  int64_t batch_size = 32;
  int64_t n_best = 1;
  std::string alignment;  // --alignment: "" (none), "hard", or a weight threshold in (0, 1]
  bool unk_replace = false;
  std::string dictionary;
  std::string attention_plot;  // directory for heatmaps; "" = none
  int64_t plot_count = 10;
  bool progress = false;  // progress lines on stderr even when it is not a terminal
  // --sample (translate only): draw translations instead of searching (models/nmt/sampling.h).
  bool sample = false;
  int64_t sample_topk = 0;
  double temperature = 1.0;
  uint64_t seed = 1;
  bool mbr = false;  // --mbr: print each sentence's minimum-Bayes-risk choice among its --n-best candidates
  std::string mbr_utility = "chrf";  // --mbr-utility: chrf or bleu
  // The decoding options as registered, to tell a value given on the command line from the default: those
  // not given come from the checkpoint's eval.* config (apply_checkpoint_decoding).
  CLI::Option* beam_option = nullptr;
  CLI::Option* length_penalty_option = nullptr;
  CLI::Option* max_len_ratio_option = nullptr;
  CLI::Option* batch_size_option = nullptr;
};

// The widest beam the CLI accepts: beyond it decoding needs memory per beam entry and vocabulary word
// (2^31 fails with bad_alloc) and translations do not improve.
inline constexpr int64_t kMaxBeam = 256;
// The largest --max-len-ratio (as eval.max_len_ratio in the config schema): more is no useful limit, and
// ratio * source length must stay far from the integer range (1e19 overflowed to a 1-word limit).
inline constexpr double kMaxLenRatio = 100.0;

// `for_translate`: the options only translate has (--n-best, --alignment); eval scores the best hypothesis alone.
void add_translate_options(CLI::App& cmd, TranslateArgs& args, bool for_translate);
// --alignment's threshold: 0 for "hard" (and for none), else the number given (validate_translate_args checks it).
double alignment_threshold(const TranslateArgs& args);
// The same for a mode given alone (luong align): "hard" -> 0, a number in (0, 1] -> itself, else an error.
double parse_alignment_mode(const std::string& mode);
// Throws naming the option, the value and the allowed range (the eval.* ranges of the config schema).
void validate_translate_args(const TranslateArgs& args);
// --beam, --length-penalty, --max-len-ratio and --batch-size not given on the command line take the
// checkpoint's eval.beam_size, eval.length_penalty, eval.max_len_ratio and eval.batch_size: the model decodes
// as it was configured to (and as `luong sweep` scores it); then the arguments are validated again.
void apply_checkpoint_decoding(TranslateArgs& args, const nmt::EvalConfig& eval);
nmt::TranslateOptions translate_options(const TranslateArgs& args);
// GEMMs in the precision the (first) checkpoint was trained with: train.precision of its stored config.
void use_trained_precision(const nmt::Translator& translator);

// "eval: perplexity 1200/5000 sentences" lines on stderr while a long pass runs: at the start, then at most
// every few seconds, when stderr is a terminal or --progress was given. A total of 0 is unknown (a stream):
// "translate: 1200 sentences".
class PassProgress {
 public:
  PassProgress(std::string what, size_t total, bool forced);
  void update(size_t done);

 private:
  std::string what_;
  size_t total_;
  bool enabled_;
  ProgressLine line_;
  std::chrono::steady_clock::time_point last_{};
  bool reported_ = false;
};

// Translates in batches of sentences of similar length (results in the input order), reporting progress on
// stderr as "<what> N/M sentences" (see PassProgress).
std::vector<nmt::Translation> translate_with_progress(const nmt::Translator& translator,
                                                      const std::vector<std::string>& sentences,
                                                      const TranslateArgs& args, const std::string& what);
// Checks and creates the --attention-plot directory (when set): called before the model is loaded, so a
// path that is a file or cannot be created fails at once instead of after decoding everything.
void prepare_attention_plot_dir(const TranslateArgs& args);
// Writes attention_plot/<n>.png for the first plot_count translations (when attention_plot is set).
void write_attention_plots(const TranslateArgs& args, const std::vector<nmt::Translation>& translations);

}  // namespace luong::cli
