#include "models/nmt/translator.h"

#include <algorithm>
#include <fstream>
#include <tuple>

#include "framework/io/checkpoint.h"
#include "models/nmt/data/bpe.h"
#include "models/nmt/data/subwords.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/utf8.h"
#include "models/nmt/mbr.h"
#include "models/nmt/nmt_task.h"
#include "models/nmt/stored_run.h"

namespace luong::nmt {
namespace {

// One checkpoint's config, vocabularies and model (on `device`).
struct LoadedModel {
  StoredRun run;
  std::unique_ptr<NmtModel> model;
};

LoadedModel load_model(const std::string& checkpoint, Device device) {
  const Checkpoint ckpt = load_checkpoint(checkpoint);
  LoadedModel m{read_stored_run(ckpt), nullptr};
  ModelConfig mc = m.run.cfg.model;
  mc.src_vocab = m.run.src_vocab.size();
  mc.tgt_vocab = m.run.tgt_vocab.size();
  mc.pad_id = Vocabulary::kPad;
  m.model = std::make_unique<NmtModel>(mc, DType::f32);
  if (!device.is_cpu())
    for (auto& [name, v] : m.model->named_parameters()) v.data() = v.data().to(device);
  load_tensors_into(ckpt, model_tensors(*m.model), "model/");
  m.model->eval();
  return m;
}

// Members of an ensemble read the same tokens: the first difference between two vocabularies, or "".
std::string vocabulary_difference(const Vocabulary& a, const Vocabulary& b) {
  const auto x = a.to_tokens(), y = b.to_tokens();
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
    if (x[i] != y[i]) return str("token ", i, " is '", y[i], "' there and '", x[i], "' in the first");
  if (x.size() != y.size()) return str(y.size(), " tokens there, ", x.size(), " in the first");
  return "";
}

}  // namespace

Translator::Translator(const std::string& checkpoint, Device device)
    : Translator(std::vector<std::string>{checkpoint}, device) {}

Translator::Translator(const std::vector<std::string>& checkpoints, Device device) : device_(device) {
  LUONG_CHECK(!checkpoints.empty(), "no checkpoint to translate with");
  std::vector<const NmtModel*> members;
  for (size_t i = 0; i < checkpoints.size(); ++i) {
    LoadedModel m = load_model(checkpoints[i], device);
    if (i == 0) {
      cfg_ = m.run.cfg;
      src_vocab_ = m.run.src_vocab;
      tgt_vocab_ = m.run.tgt_vocab;
      subwords_ = m.run.subwords;
      tokenizer_ = Tokenizer(TokenizerOptions{cfg_.data.lowercase}, subwords_.src);
    } else {
      if (!same_subwords(m.run.subwords, subwords_))
        LUONG_FAIL("ensemble: checkpoint ", checkpoints[i], " splits words into other subword units than ",
                   checkpoints[0], " (", m.run.subwords.describe(), " vs ", subwords_.describe(),
                   "); the members of an ensemble must read the same tokens");
      for (const auto& [side, mine, first] :
           {std::tuple{"source", &m.run.src_vocab, &src_vocab_}, std::tuple{"target", &m.run.tgt_vocab, &tgt_vocab_}})
        if (const std::string d = vocabulary_difference(*first, *mine); !d.empty())
          LUONG_FAIL("ensemble: checkpoint ", checkpoints[i], " has another ", side, " vocabulary than ",
                     checkpoints[0], " (", d, "); the members of an ensemble must be trained on the same vocabularies");
      if (m.run.cfg.data.lowercase != cfg_.data.lowercase)
        LUONG_FAIL("ensemble: checkpoint ", checkpoints[i],
                   " has data.lowercase: ", m.run.cfg.data.lowercase ? "true" : "false", " and ", checkpoints[0], " ",
                   cfg_.data.lowercase ? "true" : "false", "; the members of an ensemble must read the same tokens");
    }
    models_.push_back(std::move(m.model));
    members.push_back(models_.back().get());
  }
  ensemble_ = std::make_unique<Ensemble>(std::move(members));
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& sentences,
                                               const TranslateOptions& o) const {
  return translate_sentences(*ensemble_, {src_vocab_, tgt_vocab_, tokenizer_, cfg_.model.reverse_source}, device_,
                             sentences, o);
}

std::vector<Translation> translate_sentences(const Ensemble& models, const TextSide& text, Device device,
                                             const std::vector<std::string>& sentences, const TranslateOptions& o) {
  std::vector<Translation> out(sentences.size());
  BeamOptions beam = o.beam;
  beam.keep_attention = beam.keep_attention || o.unk_replace;
  // An empty (or whitespace-only) line translates to an empty line: decoding it from a lone </s> would
  // make the model invent a sentence. Only the others go through beam search.
  std::vector<size_t> todo;
  for (size_t i = 0; i < sentences.size(); ++i) {
    out[i].src_tokens = text.tokenizer.tokenize(sentences[i]);
    if (out[i].src_tokens.empty()) {
      out[i].nbest.emplace_back();  // one empty hypothesis keeps n-best output aligned
    } else {
      todo.push_back(i);
    }
  }
  // Batches of sentences of similar length: a batch decodes until its longest sentence is done and attends
  // over its longest source, so mixed lengths waste steps and padding. Each sentence's result does not depend
  // on its batch (tests/decode/beam_search_test.cpp); `out` keeps the input order.
  std::stable_sort(todo.begin(), todo.end(),
                   [&](size_t a, size_t b) { return out[a].src_tokens.size() < out[b].src_tokens.size(); });
  for (size_t start = 0; start < todo.size(); start += static_cast<size_t>(o.batch_size)) {
    const size_t end = std::min(todo.size(), start + static_cast<size_t>(o.batch_size));
    std::vector<std::vector<int64_t>> ids;
    int64_t S = 1;
    for (size_t k = start; k < end; ++k) {
      ids.push_back(text.src_vocab.encode(out[todo[k]].src_tokens));
      S = std::max<int64_t>(S, static_cast<int64_t>(ids.back().size()));
    }
    const int64_t B = static_cast<int64_t>(ids.size());
    std::vector<int64_t> flat(static_cast<size_t>(B * S), Vocabulary::kPad), lengths;
    for (int64_t b = 0; b < B; ++b) {
      std::copy(ids[static_cast<size_t>(b)].begin(), ids[static_cast<size_t>(b)].end(), flat.begin() + b * S);
      lengths.push_back(static_cast<int64_t>(ids[static_cast<size_t>(b)].size()));
    }
    const Tensor src = Tensor::from_ids(flat, {B, S}, device);
    std::vector<std::vector<Hypothesis>> hyps;
    if (o.sampling.enabled) {
      std::vector<uint64_t> ids_in_input;
      for (size_t k = start; k < end; ++k) ids_in_input.push_back(o.first_sentence + todo[k]);
      hyps =
          sample_translations(models, src, lengths, Vocabulary::kBos, Vocabulary::kEos, beam, o.sampling, ids_in_input);
    } else {
      hyps = beam_search(models, src, lengths, Vocabulary::kBos, Vocabulary::kEos, beam);
    }
    for (int64_t b = 0; b < B; ++b) {
      Translation& tr = out[todo[start + static_cast<size_t>(b)]];
      tr.nbest = std::move(hyps[static_cast<size_t>(b)]);
      if (o.mbr && tr.nbest.size() > 1) {
        // Compared as the words they detokenise to (before unknown-word replacement, which needs the choice).
        std::vector<std::string> candidates;
        for (const Hypothesis& h : tr.nbest)
          candidates.push_back(text.tokenizer.detokenize(text.tgt_vocab.decode(h.tokens)));
        const auto chosen = tr.nbest.begin() + static_cast<std::ptrdiff_t>(mbr_choice(candidates, o.mbr_utility));
        std::rotate(tr.nbest.begin(), chosen, chosen + 1);  // to the front, the others in their order
      }
      // Columns in source order for unk replacement, the plots and callers.
      if (text.reverse_source)
        for (Hypothesis& h : tr.nbest) h.attention = attention_in_source_order(h.attention, true);
      const Hypothesis& best = tr.nbest.front();
      tr.attention = best.attention;
      tr.tgt_tokens = output_tokens(best.tokens, best.attention, tr.src_tokens, text.tgt_vocab, o);
      tr.text = text.tokenizer.detokenize(tr.tgt_tokens);
    }
  }
  return out;
}

std::vector<std::vector<float>> attention_in_source_order(const std::vector<std::vector<float>>& attention,
                                                          bool reversed_source) {
  if (!reversed_source) return attention;
  std::vector<std::vector<float>> out = attention;
  // Each row covers exactly the sentence's n positions (no padding), so encoder position j is word n-1-j.
  for (auto& row : out) std::reverse(row.begin(), row.end());
  return out;
}

std::vector<std::string> output_tokens(const std::vector<int64_t>& ids,
                                       const std::vector<std::vector<float>>& attention,
                                       const std::vector<std::string>& src_tokens, const Vocabulary& tgt_vocab,
                                       const TranslateOptions& o) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (size_t j = 0; j < ids.size(); ++j) {
    std::string tok = tgt_vocab.token(ids[j]);
    if (o.unk_replace && ids[j] == Vocabulary::kUnk && j < attention.size() && !attention[j].empty() &&
        !src_tokens.empty()) {
      const auto& a = attention[j];
      const size_t src_pos = static_cast<size_t>(std::max_element(a.begin(), a.end()) - a.begin());
      // With BPE the attended piece may be part of a word: the whole word is copied (or looked up).
      const std::string src_word = whole_word_at(src_tokens, std::min(src_pos, src_tokens.size() - 1));
      auto it = o.dictionary.find(src_word);
      tok = it != o.dictionary.end() ? it->second : src_word;
    }
    out.push_back(std::move(tok));
  }
  return out;
}

std::unordered_map<std::string, std::string> read_dictionary(const std::string& path) {
  std::unordered_map<std::string, std::string> dict;
  std::unordered_map<std::string, size_t> line_of;  // source word -> the line that defined it
  const auto lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto tab = lines[i].find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 >= lines[i].size())
      LUONG_FAIL("dictionary ", path, " line ", i + 1, ": expected 'source<TAB>target', got '", lines[i], "'");
    // A third column would otherwise become part of the target word.
    if (lines[i].find('\t', tab + 1) != std::string::npos)
      LUONG_FAIL("dictionary ", path, " line ", i + 1,
                 ": expected two tab-separated columns 'source<TAB>target', got '", lines[i], "' (more than one tab)");
    const std::string source = lines[i].substr(0, tab);
    // The words it replaces are single tokens: a source with whitespace in it could never match.
    for (const char32_t ch : utf8_decode(source))
      if (is_space_char(ch))
        LUONG_FAIL("dictionary ", path, " line ", i + 1, ": source word '", source,
                   "' contains whitespace; entries map one source token to its translation");
    // Two targets for one word: which one wins would be an accident of the file order.
    if (const auto seen = line_of.find(source); seen != line_of.end())
      LUONG_FAIL("dictionary ", path, " line ", i + 1, ": source word '", source, "' is already defined on line ",
                 seen->second + 1, " (one entry per source word)");
    line_of.emplace(source, i);
    dict.emplace(source, lines[i].substr(tab + 1));
  }
  return dict;
}

}  // namespace luong::nmt
