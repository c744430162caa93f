// The parameters a new run takes from its starting point (train.init_from) at its start: every model/ tensor
// of the checkpoint, refitted to this run's own vocabularies with train.init_vocabulary = data
// (vocabulary_transfer.h), except the parts train.init_skip names (model_parts.h), which keep
// model.init's draws.
#pragma once
#include <string>
#include <vector>

#include "models/nmt/data/vocabulary.h"
#include "models/nmt/model.h"
#include "models/nmt/starting_point.h"

namespace luong::nmt {

struct StartingParametersOptions {
  std::string init_skip;  // train.init_skip
  std::string units;      // "40 BPE merges" or "whole words", for the log line
};

// Loads them into `model`, built with (and drawn for) vocabularies `src` and `tgt`: the run's own with
// start.own_vocabularies, else the checkpoint's. Returns the lines to log: what was taken, and warnings.
std::vector<std::string> load_starting_parameters(const StartingPoint& start, NmtModel& model, const Vocabulary& src,
                                                  const Vocabulary& tgt, const StartingParametersOptions& options);

}  // namespace luong::nmt
