// `luong bleu REF [REF...] [--json] [-m bleu chrf] [--chrf-word-order 2]`: corpus BLEU (and/or chrF, or chrF++)
// of the hypotheses on stdin against one reference file or several (line i of each is a reference of line i),
// printed like `sacrebleu -f text REF... < HYP` (or like its JSON output with --json).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "framework/core/error.h"
#include "launch/commands.h"
#include "models/nmt/bleu.h"
#include "models/nmt/chrf.h"
#include "models/nmt/data/text_reader.h"

namespace luong::cli {
namespace {

struct BleuOptions {
  std::vector<std::string> references;
  bool json = false;
  int width = 1;  // sacrebleu's command-line default
  std::vector<std::string> metrics{"bleu"};
  int chrf_word_order = 0;  // 2: chrF++
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

void run_bleu(const BleuOptions& o) {
  std::vector<std::vector<std::string>> refs;
  for (const std::string& path : o.references) refs.push_back(bleu_lines(read_reference(path), path));
  const auto hyps = bleu_lines(nmt::read_stdin_text(), "standard input");
  for (size_t k = 0; k < refs.size(); ++k) {
    if (hyps.size() != refs[k].size())
      LUONG_FAIL("bleu: standard input has ", hyps.size(), " lines but the reference ", o.references[k], " has ",
                 refs[k].size());
    if (refs[k].empty()) LUONG_FAIL("bleu: the reference ", o.references[k], " has no lines");
  }
  const int nrefs = static_cast<int>(refs.size());
  // sacreBLEU's order whatever the order asked: BLEU, then chrF.
  const bool with_bleu = std::count(o.metrics.begin(), o.metrics.end(), "bleu") > 0;
  const bool with_chrf = std::count(o.metrics.begin(), o.metrics.end(), "chrf") > 0;
  std::vector<std::string> lines, objects;
  if (with_bleu) {
    const bleu::BleuScore score = bleu::corpus_bleu(hyps, refs);
    lines.push_back(score.format(o.width, bleu::signature(nrefs)));
    objects.push_back(score.to_json(o.width));
  }
  if (with_chrf) {
    const chrf::ChrfScore score = chrf::corpus_chrf(hyps, refs, o.chrf_word_order);
    lines.push_back(score.format(o.width, chrf::signature(o.chrf_word_order, nrefs)));
    objects.push_back(score.to_json(o.width));
  }
  if (o.json) {  // one metric: its object; several: a list of them, as sacrebleu prints
    if (objects.size() == 1) {
      std::cout << objects[0] << "\n";
    } else {
      std::cout << "[\n";
      for (size_t i = 0; i < objects.size(); ++i) std::cout << objects[i] << (i + 1 < objects.size() ? ",\n" : "\n");
      std::cout << "]\n";
    }
  } else {
    // sacrebleu right-aligns the lines' "name|signature" parts when it prints several.
    size_t width = 0;
    for (const std::string& l : lines) width = std::max(width, l.find(" = "));
    for (const std::string& l : lines) std::cout << std::string(width - l.find(" = "), ' ') << l << "\n";
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
  cmd->callback([opts] {
    split_metrics_from_references(*opts);
    run_bleu(*opts);
  });
});

}  // namespace
}  // namespace luong::cli
