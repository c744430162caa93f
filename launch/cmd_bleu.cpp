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
#include "launch/commands.h"
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
  bool confidence = false;
  int confidence_n = significance::kDefaultResamples;
  bool paired_bs = false, paired_ar = false;
  int paired_bs_n = significance::kDefaultResamples;
  int paired_ar_n = significance::kDefaultTrials;
  uint64_t seed = significance::kDefaultSeed;
};

// sacreBLEU's line splitting over bytes read with the corpus readers' checks: a directory or unreadable
// file is named, and a NUL byte (which BLEU would count as a token) is an error, not text.
std::vector<std::string> bleu_lines(const std::string& text, const std::string& source) {
  nmt::check_no_nul(text, "bleu: " + source);
  nmt::check_line_ends(text, "bleu: " + source);
  std::istringstream in(text);
  return bleu::read_lines(in, source);
}

std::string read_reference(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    LUONG_FAIL("bleu: cannot open reference file ", path, ": it is a directory, expected a text file");
  errno = 0;
  if (!std::ifstream(path, std::ios::binary))
    LUONG_FAIL("bleu: cannot open reference file ", path, ": ", std::strerror(errno ? errno : ENOENT));
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

// One system's output: its name (the file, or "standard input") and its lines.
struct System {
  std::string name;
  std::vector<std::string> lines;
};

std::vector<System> read_systems(const BleuOptions& o) {
  std::vector<System> systems;
  if (o.inputs.empty()) return {{"standard input", bleu_lines(nmt::read_stdin_text(), "standard input")}};
  for (const std::string& path : o.inputs) {
    for (const System& s : systems)
      if (s.name == path) LUONG_FAIL("bleu: -i names ", path, " twice: give each system once");
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      LUONG_FAIL("bleu: cannot open system output ", path, ": it is a directory, expected a text file");
    errno = 0;
    if (!std::ifstream(path, std::ios::binary))
      LUONG_FAIL("bleu: cannot open system output ", path, ": ", std::strerror(errno ? errno : ENOENT));
    systems.push_back({path, bleu_lines(nmt::read_text_file(path), path)});
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

significance::MetricRows rows_of(significance::Metric m, const System& s,
                                 const std::vector<std::vector<std::string>>& refs, int chrf_word_order) {
  return m == significance::Metric::kBleu ? significance::bleu_rows(s.lines, refs)
                                          : significance::chrf_rows(s.lines, refs, chrf_word_order);
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
void print_one_system(const BleuOptions& o, const System& system, const std::vector<std::vector<std::string>>& refs) {
  const int nrefs = static_cast<int>(refs.size());
  std::vector<std::string> lines, objects;
  const auto estimate = [&](significance::Metric m) -> std::optional<bleu::ConfidenceEstimate> {
    if (!o.confidence) return std::nullopt;
    const significance::Estimate e =
        significance::bootstrap_confidence(rows_of(m, system, refs, o.chrf_word_order), o.confidence_n, o.seed);
    return bleu::ConfidenceEstimate{o.confidence_n, o.seed, e.mean, e.ci};
  };
  for (significance::Metric m : metrics_of(o)) {
    if (m == significance::Metric::kBleu) {
      bleu::BleuScore score = bleu::corpus_bleu(system.lines, refs);
      score.confidence = estimate(m);
      std::string sig = bleu::signature(nrefs);
      if (score.confidence) sig = bleu::with_test_fields(sig, score.confidence->signature_fields());
      lines.push_back(score.format(o.width, sig));
      objects.push_back(score.to_json(o.width));
    } else {
      chrf::ChrfScore score = chrf::corpus_chrf(system.lines, refs, o.chrf_word_order);
      score.confidence = estimate(m);
      std::string sig = chrf::signature(o.chrf_word_order, nrefs);
      if (score.confidence) sig = bleu::with_test_fields(sig, score.confidence->signature_fields());
      lines.push_back(score.format(o.width, sig));
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

// Terminal columns of UTF-8 text (one per code point: the table's text has no wide characters but in names).
size_t columns_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A plain table: the first column right-aligned (system names), the others left-aligned, two spaces apart.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], columns_of(row[c]));
  for (const auto& row : rows) {
    std::string line = std::string(widths[0] - columns_of(row[0]), ' ') + row[0];
    for (size_t c = 1; c < row.size(); ++c)
      line += "  " + row[c] + (c + 1 < row.size() ? std::string(widths[c] - columns_of(row[c]), ' ') : "");
    std::cout << line << "\n";
  }
}

// Several systems without a test: each one's scores, as sacrebleu's table (or its JSON list of score strings).
void print_systems(const BleuOptions& o, const std::vector<System>& systems,
                   const std::vector<std::vector<std::string>>& refs) {
  const std::vector<significance::Metric> metrics = metrics_of(o);
  std::vector<std::vector<std::string>> table{{"System"}};
  std::vector<std::string> signatures;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (significance::Metric m : metrics) {
    const significance::MetricRows probe = rows_of(m, systems[0], refs, o.chrf_word_order);
    table[0].push_back(probe.name());
    signatures.push_back(probe.name() + "|" + probe.signature());
  }
  for (const System& s : systems) {
    std::vector<std::string> row{s.name};
    nlohmann::ordered_json j;
    j["system"] = s.name;
    for (significance::Metric m : metrics) {
      const significance::MetricRows rows = rows_of(m, s, refs, o.chrf_word_order);
      const std::string score = bleu::fixed_decimals(significance::corpus_score(rows), o.width);
      row.push_back(score);
      j[rows.name()] = score;
    }
    table.push_back(row);
    list.push_back(j);
  }
  if (o.json) {
    std::cout << list.dump(4, ' ', false) << "\n";
    return;
  }
  print_table(table);
  std::cout << "\n";
  for (const std::string& sig : signatures) std::cout << " - " << sig << "\n";
}

// --paired-bs / --paired-ar: the first system is the baseline.
void print_paired_test(const BleuOptions& o, std::vector<System> systems,
                       const std::vector<std::vector<std::string>>& refs) {
  const std::vector<significance::Metric> metrics = metrics_of(o);
  const int draws = o.paired_bs ? o.paired_bs_n : o.paired_ar_n;
  const std::string test_fields = str(o.paired_bs ? "bs:" : "ar:", draws, "|seed:", o.seed);
  systems[0].name = "Baseline: " + systems[0].name;
  std::vector<std::vector<std::string>> table{{"System"}};
  for (const System& s : systems) table.push_back({s.name});
  std::vector<std::string> signatures;
  std::vector<nlohmann::ordered_json> objects(systems.size());
  for (size_t s = 0; s < systems.size(); ++s) objects[s]["system"] = systems[s].name;
  for (significance::Metric m : metrics) {
    std::vector<significance::MetricRows> rows;
    for (const System& s : systems) rows.push_back(rows_of(m, s, refs, o.chrf_word_order));
    const std::string name = rows[0].name();
    table[0].push_back(o.paired_bs ? name + " (\u03bc \u00b1 95% CI)" : name);
    signatures.push_back(name + "|" + bleu::with_test_fields(rows[0].signature(), test_fields));
    const std::vector<significance::SystemResult> results =
        o.paired_bs ? significance::paired_bootstrap(rows, draws, o.seed)
                    : significance::paired_randomization(rows, draws, o.seed);
    for (size_t s = 0; s < systems.size(); ++s) {
      const significance::SystemResult& r = results[s];
      std::string cell = bleu::fixed_decimals(r.score, o.width);
      if (r.estimate)
        cell += " (" + bleu::fixed_decimals(r.estimate->mean, o.width) + " \u00b1 " +
                bleu::fixed_decimals(r.estimate->ci, o.width) + ")";
      if (r.p_value) cell += " (p = " + bleu::fixed_decimals(*r.p_value, 4) + ")" + (*r.p_value <= 0.05 ? "*" : "");
      table[s + 1].push_back(cell);
      // sacrebleu's JSON: the result's fields, null where a test gives none.
      nlohmann::ordered_json j;
      j["score"] = r.score;
      j["p_value"] = r.p_value ? nlohmann::ordered_json(*r.p_value) : nlohmann::ordered_json(nullptr);
      j["mean"] = r.estimate ? nlohmann::ordered_json(r.estimate->mean) : nlohmann::ordered_json(nullptr);
      j["ci"] = r.estimate ? nlohmann::ordered_json(r.estimate->ci) : nlohmann::ordered_json(nullptr);
      objects[s][name] = j;
    }
  }
  if (o.json) {
    std::cout << nlohmann::ordered_json(objects).dump(4, ' ', false) << "\n";
    return;
  }
  print_table(table);
  std::cout << "\n"
            << (o.paired_bs ? str("Paired bootstrap resampling test, ", draws, " resamples")
                            : str("Paired approximate randomization test, ", draws, " trials"))
            << ": each system against the baseline, " << o.inputs[0]
            << (o.paired_bs ? " (in brackets: the\nbootstrap mean and 95% confidence interval of each score)" : "")
            << ". p is roughly the probability that a\ndifference at least this large arises by chance if the "
               "system and the baseline come from the same\nprocess; * marks p <= 0.05, a significant difference "
               "(the scores say which system is better).\n\n";
  for (const std::string& sig : signatures) std::cout << " - " << sig << "\n";
}

void run_bleu(const BleuOptions& o) {
  std::vector<std::vector<std::string>> refs;
  for (const std::string& path : o.references) refs.push_back(bleu_lines(read_reference(path), path));
  const std::vector<System> systems = read_systems(o);
  for (size_t k = 0; k < refs.size(); ++k) {
    for (const System& s : systems)
      if (s.lines.size() != refs[k].size())
        LUONG_FAIL("bleu: ", s.name, " has ", s.lines.size(), " lines but the reference ", o.references[k], " has ",
                   refs[k].size());
    if (refs[k].empty()) LUONG_FAIL("bleu: the reference ", o.references[k], " has no lines");
  }
  if (o.paired_bs || o.paired_ar) {
    if (systems.size() < 2)
      throw CLI::ValidationError(o.paired_bs ? "--paired-bs" : "--paired-ar",
                                 "a paired test needs a baseline and at least one system: -i BASELINE SYSTEM...");
    print_paired_test(o, systems, refs);
  } else if (systems.size() > 1) {
    if (o.confidence)
      throw CLI::ValidationError("--confidence",
                                 "estimates one system's score; for several, compare them with --paired-bs");
    print_systems(o, systems, refs);
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
  auto* confidence = cmd->add_flag("--confidence", opts->confidence,
                                   "Also estimate the score's mean and 95% confidence interval by bootstrap "
                                   "resampling (sacrebleu's --confidence; one system)");
  cmd->add_option("--confidence-n", opts->confidence_n, "Bootstrap resamples of --confidence")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str()
      ->needs(confidence);
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
