#include "framework/nn/attention/attention.h"

#include <utility>

#include "framework/ops/ops.h"

namespace luong {

namespace {

// memory (B, S, H) and a uint8 (B, S) mask: returns {B, S}.
std::pair<int64_t, int64_t> check_memory_and_mask(const Variable& memory, const Tensor& src_mask) {
  LUONG_CHECK(memory.dim() == 3, "attention: memory must be (B, S, H), got ", shape_str(memory.shape()));
  const int64_t B = memory.size(0), S = memory.size(1);
  LUONG_CHECK(src_mask.defined() && src_mask.dtype() == DType::u8 && src_mask.shape() == Shape({B, S}),
              "attention: src_mask must be uint8 (", B, ", ", S, ") for memory ", shape_str(memory.shape()), ", got ",
              src_mask.defined() ? src_mask.describe() : std::string("undefined"));
  return {B, S};
}

}  // namespace

AttentionMemory Attention::prepare(const Variable& memory, const Tensor& src_mask, std::vector<int64_t> lengths) const {
  const auto [B, S] = check_memory_and_mask(memory, src_mask);
  LUONG_CHECK(static_cast<int64_t>(lengths.size()) == B, "attention: ", lengths.size(),
              " source lengths for a batch of ", B);
  for (int64_t len : lengths)
    LUONG_CHECK(len >= 1 && len <= S, "attention: source length ", len, " outside [1, ", S, "]");
  AttentionMemory mem;
  mem.memory = memory, mem.mask = src_mask, mem.lengths = std::move(lengths);
  return mem;
}

AttentionMemory Attention::prepare(const Variable& memory, const Tensor& src_mask) const {
  const auto [B, S] = check_memory_and_mask(memory, src_mask);
  const std::vector<double> m = src_mask.to_vector();
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < B; ++b) {
    int64_t len = 0;
    while (len < S && m[static_cast<size_t>(b * S + len)] != 0) ++len;
    for (int64_t s = len; s < S; ++s)
      LUONG_CHECK(m[static_cast<size_t>(b * S + s)] == 0, "attention: src_mask row ", b,
                  " is not a prefix of ones (padding must come last)");
    LUONG_CHECK(len >= 1, "attention: src_mask row ", b, " has no source token");
    lengths.push_back(len);
  }
  return prepare(memory, src_mask, std::move(lengths));
}

Variable attention_context(const Variable& weights, const Variable& memory) {
  const int64_t B = memory.size(0), S = memory.size(1), H = memory.size(2);
  return reshape(bmm(reshape(weights, {B, 1, S}), memory), {B, H});
}

Variable dot_scores(const Variable& keys, const Variable& query) {
  const int64_t B = keys.size(0), S = keys.size(1), H = keys.size(2);
  return reshape(bmm(keys, reshape(query, {B, H, 1})), {B, S});
}

void check_attention_inputs(const char* variant, const Variable& h_t, const AttentionMemory& mem) {
  LUONG_CHECK(mem.memory.defined(), "attention '", variant, "': memory not prepared");
  const Shape& m = mem.memory.shape();
  LUONG_CHECK(h_t.dim() == 2 && h_t.size(0) == m[0] && h_t.size(1) == m[2], "attention '", variant, "': h_t ",
              shape_str(h_t.shape()), " does not match memory ", shape_str(m), " (need (B, H) with (B, S, H))");
}

std::shared_ptr<Attention> make_attention(const std::string& name, const AttentionOptions& opt) {
  LUONG_CHECK(opt.hidden_size > 0, "attention '", name, "': hidden_size must be positive, got ", opt.hidden_size);
  return AttentionRegistry::instance().get(name)(opt);
}

std::shared_ptr<AttentionScore> make_attention_score(const std::string& name, const AttentionOptions& opt) {
  LUONG_CHECK(opt.hidden_size > 0, "attention score '", name, "': hidden_size must be positive, got ",
              opt.hidden_size);
  return AttentionScoreRegistry::instance().get(name)(opt);
}

}  // namespace luong
