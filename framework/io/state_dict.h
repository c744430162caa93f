// StateDict: the named state one component contributes to a checkpoint (parameters, optimizer moments,
// schedule counters, RNG states). Components fill one on save and read one on load; the checkpoint file
// format (framework/io/checkpoint.h) stores it without knowing what the names mean.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "framework/tensor/tensor.h"

namespace luong {

struct StateDict {
  std::map<std::string, Tensor> tensors;       // "model/encoder/lstm/0/weight_ih" -> (I, 4H)
  std::map<std::string, int64_t> ints;         // "train/step" -> 1200 (uint64 values are bit-cast)
  std::map<std::string, double> floats;        // "schedule/lr" -> 0.5
  std::map<std::string, std::string> strings;  // "config" -> resolved YAML

  // Copies every entry of `other` under `prefix` + "/" + name.
  void merge(const StateDict& other, const std::string& prefix);
  // The entries under `prefix` + "/", with the prefix removed.
  StateDict sub(const std::string& prefix) const;
};

}  // namespace luong
