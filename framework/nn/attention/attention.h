// Attention (Luong et al. 2015, §3): given the decoder's top state h_t and the encoder states h̄_s, score
// every source position, normalise over the source (padding masked) and return the context
// c_t = Σ_s a_t(s) h̄_s together with the weights a_t.
//
// Variants register themselves by name; a score function (dot, general, concat) is an AttentionScore and
// registering one also registers the global attention of that name, while local variants (local-m, local-p)
// take the score function by name in AttentionOptions::score. A new variant is one file plus one
// LUONG_REGISTER_ATTENTION or LUONG_REGISTER_ATTENTION_SCORE line.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/registry.h"
#include "framework/nn/module.h"

namespace luong {

struct AttentionOptions {
  int64_t hidden_size = 0;         // H of both h_t and h̄_s
  std::string score = "general";   // the score function of the local variants
  int64_t window = 10;             // D of the local variants: window [p_t - D, p_t + D]
  DType dtype = DType::f32;
};

struct AttentionOutput {
  Variable context;  // (B, H)
  Variable weights;  // (B, S), zero on padding and outside a local window
};

// The encoder side of attention for one batch, computed once and reused at every decoder step.
struct AttentionMemory {
  Variable memory;               // (B, S, H) encoder top-layer states h̄_s
  Variable keys;                 // what the score function precomputed from memory (its own layout)
  Tensor mask;                   // (B, S) uint8, 1 = real source token; every row a prefix of ones
  std::vector<int64_t> lengths;  // (B) source lengths, the number of ones in each mask row
};

// A score function: score(h_t, h̄_s) for all s at once.
class AttentionScore : public Module {
 public:
  // Per-batch work independent of the decoder step; the result is passed back to score() as keys.
  virtual Variable prepare(const Variable& memory) const { return memory; }  // memory (B, S, H)
  // h_t (B, H), keys from prepare() -> scores (B, S).
  virtual Variable score(const Variable& h_t, const Variable& keys) const = 0;
  // For scores that are dot products keys_s · q(h_t) with keys (B, S, H): the query q(h_t) (B, H), so that
  // global attention can run score, softmax and context as one fused node (ops attention_step).
  // Undefined (the default) for other scores, which only implement score().
  virtual Variable query(const Variable& /*h_t*/) const { return Variable(); }
};

class Attention : public Module {
 public:
  // memory (B, S, H), src_mask (B, S) uint8 holding lengths[b] leading ones in row b (length_mask) -> the
  // per-batch state attend() reads. The lengths come from the caller's host data: nothing is read back from
  // the device (a captured step cannot, core/capture_guard.h).
  virtual AttentionMemory prepare(const Variable& memory, const Tensor& src_mask, std::vector<int64_t> lengths) const;
  // The same with the lengths read from the mask on the host, which is checked to be a prefix of ones per row.
  AttentionMemory prepare(const Variable& memory, const Tensor& src_mask) const;
  // h_t (B, H) at decoder step t (0-based) -> context and weights.
  virtual AttentionOutput attend(const Variable& h_t, const AttentionMemory& mem, int64_t t) const = 0;
  // prepare() + attend() for a single step.
  AttentionOutput forward(const Variable& h_t, const Variable& memory, const Tensor& src_mask, int64_t t) const {
    return attend(h_t, prepare(memory, src_mask), t);
  }
};

using AttentionFactory = std::function<std::shared_ptr<Attention>(const AttentionOptions&)>;
using AttentionRegistry = Registry<AttentionFactory>;
using AttentionScoreFactory = std::function<std::shared_ptr<AttentionScore>(const AttentionOptions&)>;
using AttentionScoreRegistry = Registry<AttentionScoreFactory>;

std::shared_ptr<Attention> make_attention(const std::string& name, const AttentionOptions& opt);
std::shared_ptr<AttentionScore> make_attention_score(const std::string& name, const AttentionOptions& opt);

// Shared pieces of the variants.
// context = Σ_s weights(b, s) memory(b, s, :): weights (B, S), memory (B, S, H) -> (B, H).
Variable attention_context(const Variable& weights, const Variable& memory);
// scores(b, s) = keys(b, s, :) · query(b, :): keys (B, S, H), query (B, H) -> (B, S).
Variable dot_scores(const Variable& keys, const Variable& query);
// Checks h_t (B, H) against the memory (B, S, H), naming the variant.
void check_attention_inputs(const char* variant, const Variable& h_t, const AttentionMemory& mem);
// Registers a global attention variant that scores with `score` (used by the registration macro).
bool register_global_attention(const std::string& name, AttentionScoreFactory score, const std::string& help);

template <class T>
bool register_attention_score(const std::string& name, const std::string& help) {
  AttentionScoreFactory f = [](const AttentionOptions& o) { return std::make_shared<T>(o); };
  AttentionScoreRegistry::instance().add(name, f, help);
  return register_global_attention(name, f, "global attention, score: " + help);
}

}  // namespace luong

// A variant with its own class T (constructible from AttentionOptions).
#define LUONG_REGISTER_ATTENTION(name, T, help)                                               \
  static const bool LUONG_CONCAT(kLuongAttentionRegistered_, __COUNTER__) =                    \
      ::luong::AttentionRegistry::instance().add(                                              \
          name, [](const ::luong::AttentionOptions& o) -> std::shared_ptr<::luong::Attention> { \
            return std::make_shared<T>(o);                                                     \
          },                                                                                   \
          help)
// A score function T (an AttentionScore constructible from AttentionOptions), usable by the local
// variants, and the global attention variant of the same name.
#define LUONG_REGISTER_ATTENTION_SCORE(name, T, help) \
  static const bool LUONG_CONCAT(kLuongScoreRegistered_, __COUNTER__) = ::luong::register_attention_score<T>(name, help)
