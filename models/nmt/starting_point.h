// train.init_from: a new run that starts from a trained model's parameters instead of model.init's draws
// (fine-tuning on another corpus, domain adaptation, a second stage with another optimizer or schedule). The
// run takes the checkpoint's vocabularies and subword units, since its embedding and output rows are theirs,
// and starts its own optimizer state, schedule, step count and data position from zero, as OpenNMT-py's
// train_from with reset_optim and fairseq's --reset-optimizer do.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"
#include "models/nmt/stored_run.h"

namespace luong::nmt {

struct StartingPoint {
  Checkpoint checkpoint;  // its model/ tensors are copied into the new model
  StoredRun run;
  int64_t step = -1;  // the step of the run that wrote it; -1 for an averaged model (no trainer state)
  // The data.* keys that choose vocabularies and subword units where the new config differs from the run that
  // wrote the checkpoint ("data.bpe_merges is 10000 in its run, 0 here"): they have no effect, the checkpoint's
  // vocabularies and units are used. Empty when they agree.
  std::vector<std::string> unused_vocabulary_settings;
  // The checkpoint is the run's own, being resumed (resumed_starting_point): it supplies the vocabularies and
  // units only, the trainer restores its parameters with the rest of the run's state.
  bool resumed = false;
  // train.init_vocabulary = data: the run builds its vocabularies and units from its data and carries the
  // checkpoint's rows to them by token (vocabulary_transfer.h); a resumed such run rebuilds them as a fresh
  // run does, its checkpoint checking they are the same.
  bool own_vocabularies = false;
};

// Reads `path` for a run configured by `config_text` (resolved, Config::dump()). The checkpoint must describe
// the same network: every model.* key except model.dropout, model.init and model.init_range (the new run's
// apply), and data.lowercase (it decides the tokens; free with `own_vocabularies`, which carries rows by
// token whatever made them), equal to this config's; the error lists each key that differs with both values.
// Errors start with "train.init_from".
StartingPoint read_starting_point(const std::string& path, const std::string& config_text, bool own_vocabularies);

// A run resumed from `checkpoint`, its own: when the run was started with train.init_from, the vocabularies
// and units it took then, read back from `checkpoint` (which holds them), so the starting checkpoint is not
// read again and may have been moved or deleted since, as fairseq's --restore-file is ignored once a run has
// its own checkpoint. nullopt when the run was not (the task builds them from the data as it did at the
// start), or when it built its own (train.init_vocabulary = data: own_vocabularies, nothing else taken). The
// train.init_from of the resumed run decides, not the config's: a run continues as it began.
std::optional<StartingPoint> resumed_starting_point(const Checkpoint& checkpoint);

}  // namespace luong::nmt
