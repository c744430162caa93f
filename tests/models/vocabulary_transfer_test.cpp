// train.init_vocabulary = data at the unit level: which parameters a vocabulary shapes (and along which
// axis), where each token of a new vocabulary was in the old one, and the refitted checkpoint a new model
// loads: carried tokens take the stored entries, new tokens keep the model's draws, every other parameter
// is the stored one; a stored tensor that does not fit its vocabulary is named.
#include "models/nmt/vocabulary_transfer.h"

#include <gtest/gtest.h>

#include <set>

#include "framework/io/checkpoint.h"
#include "models/nmt/model.h"
#include "models/nmt/nmt_task.h"
#include "tests/support/error_of.h"
#include "tests/support/model_diff.h"

namespace luong::nmt {
namespace {

using luong::testing::entry_along;
using luong::testing::error_of;

ModelConfig small_config(int64_t src_vocab, int64_t tgt_vocab, bool tie) {
  ModelConfig c;
  c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab, c.pad_id = 0, c.layers = 2, c.hidden_size = 6;
  c.embedding_size = tie ? 6 : 5, c.dropout = 0.0, c.attention = "general", c.tie_embeddings = tie;
  return c;
}

std::map<std::string, Shape> shapes_of(const NmtModel& m) {
  std::map<std::string, Shape> out;
  for (const auto& [name, v] : m.named_parameters()) out[name] = v.shape();
  return out;
}

Vocabulary words(const std::vector<std::string>& tokens) {
  std::vector<std::string> all = Vocabulary::specials();
  all.insert(all.end(), tokens.begin(), tokens.end());
  return Vocabulary::from_tokens(all);
}

TEST(VocabularyAxes, NameEveryParameterAVocabularyShapesAndTheAxisItShapes) {
  // Two models that differ only in their vocabulary sizes differ exactly in the parameters listed, along the
  // axis listed: a vocabulary-shaped parameter added later and not listed fails here.
  for (const bool tie : {false, true}) {
    const NmtModel a(small_config(11, 13, tie)), b(small_config(17, 19, tie));
    const std::map<std::string, Shape> sa = shapes_of(a), sb = shapes_of(b);
    std::map<std::string, VocabularyAxis> found;
    for (const auto& [name, shape] : sa) {
      const Shape& other = sb.at(name);
      ASSERT_EQ(shape.size(), other.size()) << name;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] != other[d]) {
          EXPECT_FALSE(found.contains(name)) << name << " differs along two axes";
          found[name] = {shape[d] == 13, static_cast<int>(d)};
        }
    }
    const std::map<std::string, VocabularyAxis> listed = a.vocabulary_axes();
    ASSERT_EQ(listed.size(), found.size()) << "tie " << tie;
    for (const auto& [name, axis] : found) {
      ASSERT_TRUE(listed.contains(name)) << name << " (tie " << tie << ")";
      EXPECT_EQ(listed.at(name).target, axis.target) << name;
      EXPECT_EQ(listed.at(name).axis, axis.axis) << name;
    }
  }
}

TEST(CarryTokens, FindsEachTokenOfTheNewVocabularyInTheOldByItsText) {
  const Vocabulary old = words({"a", "b", "c"}), now = words({"c", "d", "a", "e"});
  const TokenCarry carry = carry_tokens(old, now);
  EXPECT_EQ(carry.from, (std::vector<int64_t>{0, 1, 2, 3, 6, -1, 4, -1}));
  EXPECT_EQ(carry.carried, 6);
  EXPECT_EQ(carry.size(), 8);
  EXPECT_EQ(carry_tokens(now, now).carried, now.size());
}

TEST(FitToVocabularies, CarriedTokensTakeTheStoredEntriesNewOnesKeepTheDrawsTheRestIsStored) {
  for (const bool tie : {false, true}) {
    SCOPED_TRACE(tie ? "tied embeddings" : "separate output layer");
    const Vocabulary old_src = words({"a", "b", "c"}), old_tgt = words({"x", "y", "z"});
    const Vocabulary new_src = words({"c", "d", "a", "e"}), new_tgt = words({"z", "w"});
    Generator g1(1), g2(2);
    const NmtModel parent(small_config(old_src.size(), old_tgt.size(), tie), g1);
    NmtModel child(small_config(new_src.size(), new_tgt.size(), tie), g2);
    Checkpoint stored;
    stored.path = "parent.h5";
    stored.state = model_tensors(parent);
    const StateDict drawn = model_tensors(child);
    std::map<std::string, Tensor> before;  // the child's draws, copied: loading overwrites its storage
    for (const auto& [name, t] : drawn.tensors) before[name] = t.clone();

    const TokenCarry src = carry_tokens(old_src, new_src), tgt = carry_tokens(old_tgt, new_tgt);
    load_tensors_into(fit_to_vocabularies(stored, old_src.size(), old_tgt.size(), child, src, tgt), drawn, "model/");

    const std::map<std::string, VocabularyAxis> axes = child.vocabulary_axes();
    for (const auto& [name, v] : child.named_parameters()) {
      const std::string entry_name = checkpoint_name(name);
      const Tensor& was = stored.state.tensors.at(entry_name);
      const auto axis = axes.find(name);
      if (axis == axes.end()) {
        EXPECT_EQ(v.data().to_vector(), was.to_vector()) << name;
        continue;
      }
      const TokenCarry& carry = axis->second.target ? tgt : src;
      for (int64_t id = 0; id < carry.size(); ++id) {
        const int64_t from = carry.from[static_cast<size_t>(id)];
        const std::vector<double> expected = from >= 0 ? entry_along(was, axis->second.axis, from)
                                                       : entry_along(before.at(entry_name), axis->second.axis, id);
        EXPECT_EQ(entry_along(v.data(), axis->second.axis, id), expected) << name << " token " << id;
      }
    }
    // The tokens new to the child exist on both sides, so both kinds of entry were compared.
    EXPECT_LT(src.carried, src.size());
    EXPECT_LT(tgt.carried, tgt.size());
  }
}

TEST(FitToVocabularies, AStoredTensorThatDoesNotFitItsVocabularyIsNamed) {
  const Vocabulary old_src = words({"a", "b", "c"}), old_tgt = words({"x", "y", "z"});
  Generator g1(1), g2(2);
  const NmtModel parent(small_config(old_src.size(), old_tgt.size(), false), g1);
  const NmtModel child(small_config(old_src.size() + 1, old_tgt.size(), false), g2);
  Checkpoint stored;
  stored.path = "parent.h5";
  stored.state = model_tensors(parent);
  const TokenCarry src = carry_tokens(old_src, words({"a", "b", "c", "d"})), tgt = carry_tokens(old_tgt, old_tgt);
  // Its run says 8 source tokens, its embedding has 7 rows.
  EXPECT_EQ(error_of([&] { fit_to_vocabularies(stored, old_src.size() + 1, old_tgt.size(), child, src, tgt); }),
            "checkpoint parent.h5: parameter 'model/encoder/embedding/weight' has shape (7, 5), which does not hold "
            "one entry per token of its source vocabulary (8 tokens) along axis 0");
  // Another embedding size is not a vocabulary matter: left to load_tensors_into, which names both shapes.
  ModelConfig wider = small_config(old_src.size() + 1, old_tgt.size(), false);
  wider.embedding_size = 7;
  const NmtModel other(wider, g2);
  EXPECT_EQ(error_of([&] {
              load_tensors_into(fit_to_vocabularies(stored, old_src.size(), old_tgt.size(), other, src, tgt),
                                model_tensors(other), "model/");
            }),
            "checkpoint parent.h5: parameter 'model/decoder/embedding/weight' has shape (7, 5) in the checkpoint but "
            "(7, 7) in the model");
}

}  // namespace
}  // namespace luong::nmt
