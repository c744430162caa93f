// What a luong checkpoint holds besides its tensors: the config its run was trained with, the vocabularies and
// the subword units. `luong eval`, `translate` and `score` rebuild a model from it (translator.h), and a run
// started from a trained model (train.init_from, starting_point.h) reads its tokens the same way.
#pragma once
#include <string>

#include "framework/io/checkpoint.h"
#include "models/nmt/data/subwords.h"
#include "models/nmt/data/vocabulary.h"
#include "models/nmt/nmt_config.h"

namespace luong::nmt {

struct StoredRun {
  NmtConfig cfg;
  std::string config_text;  // the config resolved against today's schema (keys added since: their defaults)
  Vocabulary src_vocab, tgt_vocab;
  Subwords subwords;  // null sides for whole words
};

// Errors name the checkpoint's path, and the entry when one is malformed; a file without a config or
// vocabularies (a checkpoint of another program's trainer) is "not a luong training checkpoint".
StoredRun read_stored_run(const Checkpoint& checkpoint);

}  // namespace luong::nmt
