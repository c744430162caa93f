// Parts of a model named in a config: train.init_skip (drawn afresh instead of loaded from train.init_from)
// and train.freeze (left as they are by the optimizer). Parts are named as parameters are, by their module
// path ("decoder", "decoder.output", "encoder.lstm.1") or a parameter's whole name, so every part of every
// registered attention variant can be named without a list to keep up to date.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"
#include "models/nmt/model.h"

namespace luong::nmt {

// The items of a comma-separated list, trimmed of spaces, empty items dropped ("decoder, encoder.lstm.1").
std::vector<std::string> part_list(const std::string& spec);

// The names of the parameters of `model` under the parts `spec` names ("decoder.output" covers
// decoder.output.weight and decoder.output.bias, not decoder.output_bias). Fails, the message starting with
// `key` ("train.freeze"), for an item that names no part of the model, suggesting the closest part and
// listing the top ones.
std::set<std::string> parameters_in_parts(const std::string& key, const std::string& spec, const NmtModel& model);

// The same parameters as positions in model.named_parameters(), ascending: the indices FlatParameters and
// FrozenParameters take when the flat buffers are built in that order (as training builds them).
std::vector<size_t> parameter_indices_in_parts(const std::string& key, const std::string& spec, const NmtModel& model);

// Removes the skipped parameters' entries ("model/" + path) from a checkpoint to load and from the
// destinations it loads into, so that load_tensors_into leaves their draws as they are.
void drop_skipped(const std::set<std::string>& skipped, Checkpoint& source, StateDict& destinations);

}  // namespace luong::nmt
