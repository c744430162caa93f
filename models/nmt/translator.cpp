#include "models/nmt/translator.h"

#include <algorithm>
#include <fstream>

#include "framework/io/checkpoint.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/nmt_task.h"

namespace luong::nmt {

Translator::Translator(const std::string& checkpoint, Device device) : device_(device) {
  const Checkpoint ckpt = load_checkpoint(checkpoint);
  const auto& strings = ckpt.state.strings;
  if (!strings.count("config") || !strings.count("vocab/src") || !strings.count("vocab/tgt"))
    LUONG_FAIL("checkpoint ", checkpoint, " has no config or vocabularies: not a luong training checkpoint");
  // The schema without registry validators is enough here: the names were validated when training began.
  const Config config = Config::load_string(nmt_schema(), strings.at("config"), checkpoint + ":/config");
  cfg_ = nmt_config_from(config);
  src_vocab_ = Vocabulary::from_tokens(split_string_list(strings.at("vocab/src")));
  tgt_vocab_ = Vocabulary::from_tokens(split_string_list(strings.at("vocab/tgt")));
  tokenizer_ = Tokenizer(TokenizerOptions{cfg_.data.lowercase});
  ModelConfig mc = cfg_.model;
  mc.src_vocab = src_vocab_.size();
  mc.tgt_vocab = tgt_vocab_.size();
  mc.pad_id = Vocabulary::kPad;
  model_ = std::make_unique<NmtModel>(mc, DType::f32);
  StateDict dest;
  for (auto& [name, v] : model_->named_parameters()) {
    if (!device.is_cpu()) v.data() = v.data().to(device);
    dest.tensors[checkpoint_name(name)] = v.data();
  }
  load_tensors_into(ckpt, dest);
  model_->eval();
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& sentences,
                                               const TranslateOptions& o) const {
  std::vector<Translation> out(sentences.size());
  BeamOptions beam = o.beam;
  beam.keep_attention = beam.keep_attention || o.unk_replace;
  // An empty (or whitespace-only) line translates to an empty line: decoding it from a lone </s> would
  // make the model invent a sentence. Only the others go through beam search.
  std::vector<size_t> todo;
  for (size_t i = 0; i < sentences.size(); ++i) {
    out[i].src_tokens = tokenizer_.tokenize(sentences[i]);
    if (out[i].src_tokens.empty()) {
      out[i].nbest.emplace_back();  // one empty hypothesis keeps n-best output aligned
    } else {
      todo.push_back(i);
    }
  }
  for (size_t start = 0; start < todo.size(); start += static_cast<size_t>(o.batch_size)) {
    const size_t end = std::min(todo.size(), start + static_cast<size_t>(o.batch_size));
    std::vector<std::vector<int64_t>> ids;
    int64_t S = 1;
    for (size_t k = start; k < end; ++k) {
      ids.push_back(src_vocab_.encode(out[todo[k]].src_tokens));
      S = std::max<int64_t>(S, static_cast<int64_t>(ids.back().size()));
    }
    const int64_t B = static_cast<int64_t>(ids.size());
    std::vector<int64_t> flat(static_cast<size_t>(B * S), Vocabulary::kPad), lengths;
    for (int64_t b = 0; b < B; ++b) {
      std::copy(ids[static_cast<size_t>(b)].begin(), ids[static_cast<size_t>(b)].end(), flat.begin() + b * S);
      lengths.push_back(static_cast<int64_t>(ids[static_cast<size_t>(b)].size()));
    }
    auto hyps = beam_search(*model_, Tensor::from_ids(flat, {B, S}, device_), lengths, Vocabulary::kBos,
                            Vocabulary::kEos, beam);
    for (int64_t b = 0; b < B; ++b) {
      Translation& tr = out[todo[start + static_cast<size_t>(b)]];
      tr.nbest = std::move(hyps[static_cast<size_t>(b)]);
      const Hypothesis& best = tr.nbest.front();
      tr.attention = best.attention;
      for (size_t j = 0; j < best.tokens.size(); ++j) {
        std::string tok = tgt_vocab_.token(best.tokens[j]);
        if (o.unk_replace && best.tokens[j] == Vocabulary::kUnk && j < best.attention.size() &&
            !tr.src_tokens.empty()) {
          const auto& a = best.attention[j];
          const size_t src_pos = static_cast<size_t>(std::max_element(a.begin(), a.end()) - a.begin());
          const std::string& src_word = tr.src_tokens[std::min(src_pos, tr.src_tokens.size() - 1)];
          auto it = o.dictionary.find(src_word);
          tok = it != o.dictionary.end() ? it->second : src_word;
        }
        tr.tgt_tokens.push_back(tok);
      }
      tr.text = tokenizer_.detokenize(tr.tgt_tokens);
    }
  }
  return out;
}

std::unordered_map<std::string, std::string> read_dictionary(const std::string& path) {
  std::unordered_map<std::string, std::string> dict;
  const auto lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto tab = lines[i].find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 >= lines[i].size())
      LUONG_FAIL("dictionary ", path, " line ", i + 1, ": expected 'source<TAB>target', got '", lines[i], "'");
    dict.emplace(lines[i].substr(0, tab), lines[i].substr(tab + 1));
  }
  return dict;
}

}  // namespace luong::nmt
