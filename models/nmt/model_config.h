// The model section of a config (`model.*` keys), as the model builder consumes it. The YAML layer
// (framework/io/config) fills it; defaults here are the documented defaults.
#pragma once
#include <cstdint>
#include <string>

namespace luong::nmt {

struct ModelConfig {
  int64_t src_vocab = 0;              // filled from the built vocabulary
  int64_t tgt_vocab = 0;              // filled from the built vocabulary
  int64_t pad_id = 0;                 // <pad> id in both vocabularies
  int64_t layers = 2;                 // model.layers: stacked LSTM layers in encoder and decoder
  int64_t hidden_size = 256;          // model.hidden_size
  int64_t embedding_size = 256;       // model.embedding_size
  double dropout = 0.2;               // model.dropout: between LSTM layers and before attention/output
  std::string attention = "general";  // model.attention: a registered attention variant
  std::string attention_score = "general";  // model.attention_score: score function of local-m / local-p
  int64_t attention_window = 10;      // model.attention_window: D of the local variants
  bool input_feeding = true;          // model.input_feeding
  bool reverse_source = false;        // model.reverse_source (Luong et al. 2015 reverse the source)
  bool bidirectional_encoder = false; // model.bidirectional_encoder: first encoder layer bidirectional
  bool tie_embeddings = false;        // model.tie_embeddings: output projection shares target embeddings
  std::string init = "uniform";       // model.init: a registered initialiser
  double init_range = 0.1;            // model.init_range: uniform in [-r, r] (the paper's 0.1)
};

}  // namespace luong::nmt
