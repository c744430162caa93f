// The training data path of `luong train`'s start-up, stage by stage, on a real corpus: read the files,
// tokenize, learn and apply BPE, build the vocabularies, encode. Prints each stage's time, the resident memory
// after it and the peak so far (the kernel's VmRSS and VmHWM). Never asserted.
//
//   build/bench/corpus_bench --src train.en --tgt train.de [--bpe-merges 10000] [--vocab 8000] [--max-len 50]
//
// A corpus of WMT size can be imitated by repeating one: `for i in $(seq 10); do cat train.en; done > big.en`.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "models/nmt/data/bpe.h"
#include "models/nmt/data/corpus.h"
#include "tests/support/bench_util.h"

using namespace luong;
using luong::bench::proc_status_mb;

int main(int argc, char** argv) {
  CLI::App app{"luong's training data path: time and memory of each start-up stage"};
  std::string src, tgt;
  int64_t merges = 0, vocab = 8000, max_len = 50;
  app.add_option("--src", src, "training source file")->required();
  app.add_option("--tgt", tgt, "training target file")->required();
  app.add_option("--bpe-merges", merges, "data.bpe_merges (0: words)");
  app.add_option("--vocab", vocab, "data.src_vocab_size and data.tgt_vocab_size");
  app.add_option("--max-len", max_len, "data.max_len");
  CLI11_PARSE(app, argc, argv);

  std::printf("| stage | seconds | RSS after (MB) | peak so far (MB) |\n|---|---|---|---|\n");
  auto t0 = std::chrono::steady_clock::now();
  const auto row = [&](const char* stage) {
    const auto t = std::chrono::steady_clock::now();
    std::printf("| %s | %.2f | %.0f | %.0f |\n", stage, std::chrono::duration<double>(t - t0).count(),
                proc_status_mb("VmRSS"), proc_status_mb("VmHWM"));
    std::fflush(stdout);
    t0 = std::chrono::steady_clock::now();
  };
  row("start");
  nmt::TokenizedCorpus tokens = nmt::tokenize_files(src, tgt, nmt::Tokenizer());
  row("read and tokenize");
  if (const auto bpe = nmt::learn_subwords(tokens, merges)) {
    std::printf("| (%lld BPE merges) | | | |\n", static_cast<long long>(bpe->merges()));
    row("learn and apply BPE");
  }
  const nmt::Vocabulary sv = nmt::Vocabulary::build(nmt::count_tokens(tokens, tokens.src), vocab, 2);
  const nmt::Vocabulary tv = nmt::Vocabulary::build(nmt::count_tokens(tokens, tokens.tgt), vocab, 2);
  row("vocabularies");
  const nmt::Corpus corpus = nmt::encode_corpus(tokens, sv, tv, max_len);
  row("encode");
  const int32_t distinct = tokens.tokens.size();
  tokens = nmt::TokenizedCorpus();
  row("tokens released");
  std::printf("\n%s; %d distinct tokens and pieces\n", corpus.stats.summary().c_str(), distinct);
  return 0;
}
