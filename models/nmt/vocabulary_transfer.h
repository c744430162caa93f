// train.init_vocabulary = data: a run that starts from a trained model but builds its own vocabularies (new
// words of a new domain, another source language) carries each embedding row, output column and output bias
// entry of a token both vocabularies hold from the checkpoint, by the token's text; tokens new to it keep
// model.init's draws. OpenNMT-py's update_vocab does the same for a fine-tuning run; Zoph et al. (2016) start
// a low-resource pair from a parent model with another source language this way.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/io/checkpoint.h"
#include "models/nmt/data/vocabulary.h"
#include "models/nmt/model.h"

namespace luong::nmt {

// Where each token of one vocabulary was in another.
struct TokenCarry {
  std::vector<int64_t> from;  // per id of the new vocabulary: the token's id in the old one, -1 when new
  int64_t carried = 0;        // tokens found in the old vocabulary (the four specials always are)
  int64_t size() const { return static_cast<int64_t>(from.size()); }
};
TokenCarry carry_tokens(const Vocabulary& from, const Vocabulary& to);

// `checkpoint` (its run's vocabularies: src.from / tgt.from ids) with every vocabulary-shaped model/ tensor
// (model.vocabulary_axes()) refitted to `model`'s vocabularies: the model's current values (its drawn
// initialisation) where a token is new, the checkpoint's where it was carried. Other entries are the
// checkpoint's as they are, for load_tensors_into to check and copy. Fails, naming the file and the entry,
// when a stored tensor does not have one entry per token of the vocabulary its run stored.
Checkpoint fit_to_vocabularies(const Checkpoint& checkpoint, int64_t stored_src, int64_t stored_tgt,
                               const NmtModel& model, const TokenCarry& src, const TokenCarry& tgt);

}  // namespace luong::nmt
