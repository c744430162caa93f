#include "models/nmt/vocabulary_transfer.h"

#include "framework/core/error.h"
#include "models/nmt/nmt_task.h"

namespace luong::nmt {

TokenCarry carry_tokens(const Vocabulary& from, const Vocabulary& to) {
  TokenCarry out;
  out.from.resize(static_cast<size_t>(to.size()), -1);
  for (int64_t id = 0; id < to.size(); ++id) {
    const std::string& token = to.token(id);
    if (!from.contains(token)) continue;
    out.from[static_cast<size_t>(id)] = from.id(token);
    ++out.carried;
  }
  return out;
}

namespace {

// `drawn` (the model's tensor) with the entries of carried tokens along `axis` taken from `stored`.
Tensor carry_along(const Tensor& stored, const Tensor& drawn, int axis, const TokenCarry& carry) {
  Tensor out = drawn.to(Device::cpu()).to(DType::f32).clone();
  const Tensor old = stored.to(Device::cpu()).to(DType::f32);
  const Shape& shape = out.shape();
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < static_cast<size_t>(axis); ++d) outer *= shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t now = shape[static_cast<size_t>(axis)], was = old.shape()[static_cast<size_t>(axis)];
  const float* src = old.data<float>();
  float* dst = out.data<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < now; ++j) {
      const int64_t k = carry.from[static_cast<size_t>(j)];
      if (k < 0) continue;
      const float* from = src + (o * was + k) * inner;
      float* to = dst + (o * now + j) * inner;
      for (int64_t i = 0; i < inner; ++i) to[i] = from[i];
    }
  return out;
}

}  // namespace

Checkpoint fit_to_vocabularies(const Checkpoint& checkpoint, int64_t stored_src, int64_t stored_tgt,
                               const NmtModel& model, const TokenCarry& src, const TokenCarry& tgt) {
  Checkpoint out = checkpoint;  // tensors are handles: only the refitted entries are new storage
  const std::map<std::string, VocabularyAxis> axes = model.vocabulary_axes();
  for (const auto& [name, v] : model.named_parameters()) {
    const auto axis = axes.find(name);
    if (axis == axes.end()) continue;
    const std::string entry = checkpoint_name(name);
    const auto it = checkpoint.state.tensors.find(entry);
    if (it == checkpoint.state.tensors.end()) continue;  // load_tensors_into names what is missing
    const VocabularyAxis a = axis->second;
    const TokenCarry& carry = a.target ? tgt : src;
    const int64_t stored = a.target ? stored_tgt : stored_src;
    const Shape &have = it->second.shape(), want = v.shape();
    bool same_network = have.size() == want.size() && static_cast<size_t>(a.axis) < have.size();
    for (size_t d = 0; same_network && d < have.size(); ++d)
      same_network = d == static_cast<size_t>(a.axis) || have[d] == want[d];
    if (!same_network) continue;  // another embedding or hidden size: load_tensors_into names both shapes
    if (have[static_cast<size_t>(a.axis)] != stored)
      LUONG_FAIL("checkpoint ", checkpoint.path, ": parameter '", entry, "' has shape ", shape_str(have),
                 ", which does not hold one entry per token of its ", a.target ? "target" : "source", " vocabulary (",
                 stored, " tokens) along axis ", a.axis);
    LUONG_CHECK(carry.size() == want[static_cast<size_t>(a.axis)], "fit_to_vocabularies: ", carry.size(),
                " carried ids for ", name, " ", shape_str(want));
    out.state.tensors[entry] = carry_along(it->second, v.data(), a.axis, carry);
  }
  return out;
}

}  // namespace luong::nmt
