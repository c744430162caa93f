// `luong bleu REF [--json]`: corpus BLEU of the hypotheses on stdin against REF, printed like
// `sacrebleu -f text REF < HYP` (or like its JSON output with --json).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "framework/core/error.h"
#include "launch/commands.h"
#include "models/nmt/bleu.h"
#include "models/nmt/data/text_reader.h"

namespace luong::cli {
namespace {

struct BleuOptions {
  std::string reference;
  bool json = false;
  int width = 1;  // sacrebleu's command-line default
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

void run_bleu(const BleuOptions& o) {
  const auto refs = bleu_lines(read_reference(o.reference), o.reference);
  const auto hyps = bleu_lines(nmt::read_stdin_text(), "standard input");
  if (hyps.size() != refs.size())
    LUONG_FAIL("bleu: standard input has ", hyps.size(), " lines but the reference ", o.reference, " has ",
               refs.size());
  if (refs.empty()) LUONG_FAIL("bleu: the reference ", o.reference, " has no lines");
  const bleu::BleuScore score = bleu::corpus_bleu(hyps, refs);
  if (o.json) {
    std::cout << score.to_json(o.width) << "\n";
  } else {
    std::cout << score.format(o.width, bleu::signature()) << "\n";
  }
  flush_stdout();
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto opts = std::make_shared<BleuOptions>();
  auto* cmd = app.add_subcommand("bleu", "Corpus BLEU of stdin against a reference file (sacreBLEU-compatible)");
  cmd->add_option("reference", opts->reference, "Reference file, one segment per line")->required();
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of the score line");
  cmd->add_option("-w,--width", opts->width, "Decimals of the score")->check(CLI::Range(0, 10));
  cmd->callback([opts] { run_bleu(*opts); });
});

}  // namespace
}  // namespace luong::cli
