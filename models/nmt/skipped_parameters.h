// train.init_skip: parts of a model that a run started from a checkpoint draws afresh instead of loading
// (fairseq's --load-pretrained-encoder-from keeps the encoder alone; a new output layer for a new task; the
// top LSTM layer of a transferred decoder). Parts are named as parameters are, by their module path
// ("decoder", "decoder.output", "encoder.lstm.1"), so every part of every registered attention variant can be
// named without a list to keep up to date.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"
#include "models/nmt/model.h"

namespace luong::nmt {

// The items of a comma-separated list, trimmed of spaces, empty items dropped ("decoder, encoder.lstm.1").
std::vector<std::string> skip_list(const std::string& spec);

// The names of the parameters of `model` under the parts `spec` names (a part is a module path or one
// parameter's name: "decoder.output" covers decoder.output.weight and decoder.output.bias, not
// decoder.output_bias). Fails naming an item that names no part of the model, suggesting the closest part
// and listing the top ones.
std::set<std::string> skipped_parameters(const std::string& spec, const NmtModel& model);

// Removes the skipped parameters' entries ("model/" + path) from a checkpoint to load and from the
// destinations it loads into, so that load_tensors_into leaves their draws as they are.
void drop_skipped(const std::set<std::string>& skipped, Checkpoint& source, StateDict& destinations);

}  // namespace luong::nmt
