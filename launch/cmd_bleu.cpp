// `luong bleu REF [REF...] [-i SYS...] [--json] [-m bleu chrf] [--chrf-word-order 2] [--confidence | --paired-bs |
// --paired-ar]`: corpus BLEU (and/or chrF, or chrF++) of the hypotheses on stdin, or of each -i file, against one
// reference file or several (line i of each is a reference of line i), printed like `sacrebleu -f text REF... <
// HYP` (or like its JSON output with --json); with a bootstrap confidence interval, or paired significance tests
// of each system against the first (models/nmt/significance/paired_tests.h), reproducing sacrebleu's numbers.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/core/error.h"
#include "launch/bleu_by_length.h"
#include "launch/bleu_systems.h"
#include "launch/commands.h"
#include "launch/confidence_options.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/significance/metric_rows.h"
#include "models/nmt/significance/paired_tests.h"

namespace luong::cli {
namespace {

struct BleuOptions {
  std::vector<std::string> references;
  std::vector<std::string> inputs;  // -i: system outputs (files); none = standard input
  bool json = false;
  int width = 1;  // sacrebleu's command-line default
  std::vector<std::string> metrics{"bleu"};
  int chrf_word_order = 0;  // 2: chrF++
  ConfidenceOptions confidence;
  bool paired_bs = false, paired_ar = false;
  int paired_bs_n = significance::kDefaultResamples;
  int paired_ar_n = significance::kDefaultTrials;
  uint64_t seed = significance::kDefaultSeed;
  std::string src;        // --src: the source lines, for --by-length
  int64_t by_length = 0;  // --by-length W: scores by source length, W words a bucket; 0 = none
};

// sacreBLEU's line splitting over bytes read with the corpus readers' checks: a directory or unreadable
// file is named, and a NUL byte (which BLEU would count as a token) is an error, not text.
std::vector<std::string> bleu_lines(const std::string& text, const std::string& source) {
  nmt::check_no_nul(text, "bleu: " + source);
  nmt::check_line_ends(text, "bleu: " + source);
  std::istringstream in(text);
  return bleu::read_lines(in, source);
}

// The bytes of an input file (`what`: "reference file", "system output"), a directory or unreadable file named.
std::string read_input(const std::string& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    LUONG_FAIL("bleu: cannot open ", what, " ", path, ": it is a directory, expected a text file");
  errno = 0;
  if (!std::ifstream(path, std::ios::binary))
    LUONG_FAIL("bleu: cannot open ", what, " ", path, ": ", std::strerror(errno ? errno : ENOENT));
  return nmt::read_text_file(path);
}

// `-m chrf REF1 REF2`: the option takes every argument before the next option but the last (left for the
// required references), so metric names come first and reference files after them; as sacrebleu's parser
// does, the files go to the references. A first value that is no metric is an error naming the choices.
void split_metrics_from_references(BleuOptions& o) {
  const auto is_metric = [](const std::string& m) { return m == "bleu" || m == "chrf"; };
  const auto first_file = std::find_if_not(o.metrics.begin(), o.metrics.end(), is_metric);
  if (first_file == o.metrics.begin())  // a usage error (exit status 2), as CLI11's own checks give
    throw CLI::ValidationError("--metrics", "'" + o.metrics.front() + "' is not a metric (bleu, chrf)");
  o.references.insert(o.references.begin(), first_file, o.metrics.end());
  o.metrics.erase(first_file, o.metrics.end());
}

std::vector<ScoredSystem> read_systems(const BleuOptions& o) {
  std::vector<ScoredSystem> systems;
  if (o.inputs.empty()) return {{"standard input", bleu_lines(nmt::read_stdin_text(), "standard input")}};
  for (const std::string& path : o.inputs) {
    for (const ScoredSystem& s : systems)
      if (s.name == path) LUONG_FAIL("bleu: -i names ", path, " twice: give each system once");
    systems.push_back({path, bleu_lines(read_input(path, "system output"), path)});
  }
  return systems;
}

// The metrics asked for, in sacreBLEU's order whatever the order asked: BLEU, then chrF.
std::vector<significance::Metric> metrics_of(const BleuOptions& o) {
  std::vector<significance::Metric> out;
  if (std::count(o.metrics.begin(), o.metrics.end(), "bleu")) out.push_back(significance::Metric::kBleu);
  if (std::count(o.metrics.begin(), o.metrics.end(), "chrf")) out.push_back(significance::Metric::kChrf);
  return out;
}

void print_json_list(const std::vector<std::string>& objects) {
  if (objects.size() == 1) {  // one metric: its object; several: a list of them, as sacrebleu prints
    std::cout << objects[0] << "\n";
    return;
  }
  std::cout << "[\n";
  for (size_t i = 0; i < objects.size(); ++i) std::cout << objects[i] << (i + 1 < objects.size() ? ",\n" : "\n");
  std::cout << "]\n";
}

// One system: sacreBLEU's score lines (or JSON objects), with --confidence's estimate.
void print_one_system(const BleuOptions& o, const ScoredSystem& system,
                      const std::vector<std::vector<std::string>>& refs) {
  std::vector<std::string> lines, objects;
  const auto estimate = [&](significance::Metric m) -> std::optional<bleu::ConfidenceEstimate> {
    if (!o.confidence.enabled) return std::nullopt;
    const significance::Estimate e =
        significance::bootstrap_confidence(rows_of(m, system, refs, o.chrf_word_order), o.confidence.resamples, o.seed);
    return bleu::ConfidenceEstimate{o.confidence.resamples, o.seed, e.mean, e.ci};
  };
  for (significance::Metric m : metrics_of(o)) {
    if (m == significance::Metric::kBleu) {
      bleu::BleuScore score = bleu::corpus_bleu(system.lines, refs);
      score.confidence = estimate(m);
      lines.push_back(score.format(o.width, score.signature()));
      objects.push_back(score.to_json(o.width));
    } else {
      chrf::ChrfScore score = chrf::corpus_chrf(system.lines, refs, o.chrf_word_order);
      score.confidence = estimate(m);
      lines.push_back(score.format(o.width, score.signature()));
      objects.push_back(score.to_json(o.width));
    }
  }
  if (o.json) {
    print_json_list(objects);
  } else {
    // sacrebleu right-aligns the lines' "name|signature" parts when it prints several.
    size_t width = 0;
    for (const std::string& l : lines) width = std::max(width, l.find(" = "));
    for (const std::string& l : lines) std::cout << std::string(width - l.find(" = "), ' ') << l << "\n";
  }
}

SystemsScoring scoring(const BleuOptions& o, const std::vector<std::vector<std::string>>& refs) {
  return {metrics_of(o), refs, o.chrf_word_order, o.width, o.json};
}

void run_bleu(const BleuOptions& o) {
  std::vector<std::vector<std::string>> refs;
  for (const std::string& path : o.references) refs.push_back(bleu_lines(read_input(path, "reference file"), path));
  const std::vector<ScoredSystem> systems = read_systems(o);
  for (size_t k = 0; k < refs.size(); ++k) {
    for (const ScoredSystem& s : systems)
      if (s.lines.size() != refs[k].size())
        LUONG_FAIL("bleu: ", s.name, " has ", s.lines.size(), " lines but the reference ", o.references[k], " has ",
                   refs[k].size());
    if (refs[k].empty()) LUONG_FAIL("bleu: the reference ", o.references[k], " has no lines");
  }
  if (o.by_length > 0) {
    const std::vector<std::string> sources = bleu_lines(read_input(o.src, "source file"), o.src);
    if (sources.size() != refs[0].size())
      LUONG_FAIL("bleu: the source ", o.src, " has ", sources.size(), " lines but the reference ", o.references[0],
                 " has ", refs[0].size());
    print_scores_by_length(scoring(o, refs), systems, sources, o.by_length);
  } else if (o.paired_bs || o.paired_ar) {
    if (systems.size() < 2)
      throw CLI::ValidationError(o.paired_bs ? "--paired-bs" : "--paired-ar",
                                 "a paired test needs a baseline and at least one system: -i BASELINE SYSTEM...");
    print_paired_test(scoring(o, refs), systems, {o.paired_bs, o.paired_bs ? o.paired_bs_n : o.paired_ar_n, o.seed});
  } else if (systems.size() > 1) {
    if (o.confidence.enabled)
      throw CLI::ValidationError("--confidence",
                                 "estimates one system's score; for several, compare them with --paired-bs");
    print_systems(scoring(o, refs), systems);
  } else {
    print_one_system(o, systems[0], refs);
  }
  flush_stdout();
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto opts = std::make_shared<BleuOptions>();
  auto* cmd = app.add_subcommand("bleu",
                                 "Corpus BLEU (or chrF) of stdin against one or more reference files "
                                 "(sacreBLEU-compatible)");
  cmd->add_option("references", opts->references,
                  "Reference file, one segment per line; several files give several references per segment "
                  "(nrefs in the signature)")
      ->required();
  cmd->add_flag("--json", opts->json,
                "Print a JSON object instead of the score line (a list of them for -m bleu chrf)");
  cmd->add_option("-w,--width", opts->width, "Decimals of the score")->check(CLI::Range(0, 10));
  cmd->add_option("-m,--metrics", opts->metrics, "bleu, chrf or both (-m bleu chrf), as sacrebleu's -m")
      ->capture_default_str();
  cmd->add_option("--chrf-word-order", opts->chrf_word_order,
                  "Word n-gram order of chrF: 0 (chrF2), 2 (chrF2++, Popovic 2017), as sacrebleu's option")
      ->check(CLI::Range(0, chrf::kMaxWordOrder))
      ->capture_default_str();
  cmd->add_option("-i,--input", opts->inputs,
                  "System output files to score instead of standard input (the first is the baseline of a paired "
                  "test); give the references first");
  auto* confidence = add_confidence_options(*cmd, opts->confidence,
                                            "Also estimate the score's mean and 95% confidence interval by bootstrap "
                                            "resampling (sacrebleu's --confidence; one system)");
  auto* paired_bs = cmd->add_flag("--paired-bs", opts->paired_bs,
                                  "Paired bootstrap resampling test of each -i system against the first (Koehn 2004; "
                                  "sacrebleu's --paired-bs)");
  auto* paired_ar = cmd->add_flag("--paired-ar", opts->paired_ar,
                                  "Paired approximate randomization test of each -i system against the first "
                                  "(Riezler and Maxwell 2005; sacrebleu's --paired-ar)");
  paired_bs->excludes(paired_ar);
  confidence->excludes(paired_bs)->excludes(paired_ar);
  cmd->add_option("--paired-bs-n", opts->paired_bs_n, "Resamples of --paired-bs")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str()
      ->needs(paired_bs);
  cmd->add_option("--paired-ar-n", opts->paired_ar_n, "Trials of --paired-ar")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str()
      ->needs(paired_ar);
  auto* by_length = cmd->add_option("--by-length", opts->by_length,
                                    "Each system's scores on the sentences grouped by source length (--src), this "
                                    "many words a group (1-W, W+1-2W, ...), as Luong et al. 2015 analyse them")
                        ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  auto* src = cmd->add_option("--src", opts->src, "The source file (one line per reference line), for --by-length")
                  ->check(CLI::ExistingFile);
  by_length->needs(src);
  src->needs(by_length);
  by_length->excludes(confidence)->excludes(paired_bs)->excludes(paired_ar);
  cmd->add_option("--seed", opts->seed,
                  "Seed of the resampling (sacrebleu's SACREBLEU_SEED: the same seed draws the same resamples)")
      ->capture_default_str();
  cmd->callback([opts] {
    split_metrics_from_references(*opts);
    run_bleu(*opts);
  });
});

}  // namespace
}  // namespace luong::cli
