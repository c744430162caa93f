// Translator: a trained model loaded from a checkpoint, with its vocabularies and tokenizer, turning
// sentences into translations (beam search, detokenisation, unknown-word replacement).
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/nmt/beam_search.h"
#include "models/nmt/data/subwords.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/vocabulary.h"
#include "models/nmt/ensemble.h"
#include "models/nmt/mbr.h"
#include "models/nmt/model.h"
#include "models/nmt/nmt_config.h"
#include "models/nmt/sampling.h"

namespace luong::nmt {

struct Translation {
  std::string text;                       // detokenised best hypothesis
  std::vector<std::string> src_tokens;    // tokenised source
  std::vector<std::string> tgt_tokens;    // output tokens (after unk replacement)
  std::vector<std::vector<float>> attention;  // (target tokens + </s>) x source tokens, in source order
  std::vector<Hypothesis> nbest;              // their attention columns in source order too
};

struct TranslateOptions {
  BeamOptions beam;
  bool unk_replace = false;  // Luong et al. 2015, sec. 4.3: <unk> -> the most-attended source word
  std::unordered_map<std::string, std::string> dictionary;  // optional source -> target word dictionary
  int64_t batch_size = 32;   // sentences decoded together
  // sampling.enabled: draw beam.n_best translations per sentence (models/nmt/sampling.h) instead of searching.
  SamplingOptions sampling;
  // The index of the first sentence of this call in the whole input: a sentence's samples are keyed by its
  // index, so a stream translated in parts draws what one call over all of it would.
  uint64_t first_sentence = 0;
  // Minimum-Bayes-risk choice (models/nmt/mbr.h): each sentence's translation is the one of its beam.n_best
  // candidates (samples, or the beam's hypotheses) with the highest mean utility (chrF or BLEU) against the
  // others; it becomes the first of Translation::nbest.
  bool mbr = false;
  MbrUtility mbr_utility = MbrUtility::chrf;
};

class Translator {
 public:
  // Loads config, vocabularies and parameters from `checkpoint`; errors name the file and the problem.
  Translator(const std::string& checkpoint, Device device);
  // An ensemble of checkpoints (models/nmt/ensemble.h) decoded as one. They must share their vocabularies and
  // text settings (data.lowercase); an error names the first that differs. Configuration (decoding
  // defaults, GEMM precision, reverse_source for the attention) comes from the first.
  Translator(const std::vector<std::string>& checkpoints, Device device);

  std::vector<Translation> translate(const std::vector<std::string>& sentences, const TranslateOptions& options) const;

  // The first checkpoint's model, and all of them as an ensemble.
  const NmtModel& model() const { return *models_.front(); }
  const Ensemble& ensemble() const { return *ensemble_; }
  const NmtConfig& config() const { return cfg_; }
  const Vocabulary& src_vocab() const { return src_vocab_; }
  const Vocabulary& tgt_vocab() const { return tgt_vocab_; }
  // The source side's tokenizer (its detokenize() serves the target too: joiner marks undo any split).
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // Each side's BPE, as the model was trained (tokenize_corpus of a reference text needs the target's).
  const Subwords& subwords() const { return subwords_; }
  Device device() const { return device_; }

 private:
  NmtConfig cfg_;
  Vocabulary src_vocab_, tgt_vocab_;
  Tokenizer tokenizer_;
  Subwords subwords_;
  std::vector<std::unique_ptr<NmtModel>> models_;
  std::unique_ptr<Ensemble> ensemble_;
  Device device_;
};

// What decoding needs besides the models: the vocabularies and tokenizer they were trained with, and whether
// they read the source reversed (model.reverse_source).
struct TextSide {
  const Vocabulary& src_vocab;
  const Vocabulary& tgt_vocab;
  const Tokenizer& tokenizer;  // the source's (its BPE); detokenises the target too
  bool reverse_source = false;
};

// Translator::translate for models already in memory (validation BLEU during training uses it): tokenises,
// decodes in batches of similar length, restores the input order, replaces unknown words, detokenises. An empty
// or whitespace-only sentence gives an empty translation.
std::vector<Translation> translate_sentences(const Ensemble& models, const TextSide& text, Device device,
                                             const std::vector<std::string>& sentences,
                                             const TranslateOptions& options);

// A model with model.reverse_source reads its source backwards, so beam search's attention column j is
// source word n-1-j (n words, rows hold no padding). Returns the rows with columns in source order.
std::vector<std::vector<float>> attention_in_source_order(const std::vector<std::vector<float>>& attention,
                                                          bool reversed_source);

// The target words of `ids`; with options.unk_replace each <unk> becomes the source word its attention row
// (in source order) weighs most, or that word's options.dictionary entry.
std::vector<std::string> output_tokens(const std::vector<int64_t>& ids,
                                       const std::vector<std::vector<float>>& attention,
                                       const std::vector<std::string>& src_tokens, const Vocabulary& tgt_vocab,
                                       const TranslateOptions& options);

// Reads a dictionary file: one "source<TAB>target" pair per line (errors name file and line).
std::unordered_map<std::string, std::string> read_dictionary(const std::string& path);

}  // namespace luong::nmt
