// A plain-loop reference for the attention variants (Luong et al. 2015, eqs. 7-10), written independently
// of the ops so that the layers can be checked value by value.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "framework/nn/attention/attention.h"

namespace luong::testing {

struct AttentionReference {
  std::vector<double> weights;  // (B, S)
  std::vector<double> context;  // (B, H)
};

// Whether the reference knows `variant` (a test fails for registered variants it does not know).
bool has_attention_reference(const std::string& variant);
// h (B, H), memory (B, S, H), lengths (B), step t; parameters read from `attention` by name.
AttentionReference attention_reference(const std::string& variant, const AttentionOptions& opt,
                                       const Attention& attention, const Tensor& h, const Tensor& memory,
                                       const std::vector<int64_t>& lengths, int64_t t);

}  // namespace luong::testing
