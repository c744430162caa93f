// Translator's post-processing of a hypothesis: attention columns back in source order for a model that
// reads its source reversed, and <unk> replaced by the most-attended source word (or its dictionary entry).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/nmt/translator.h"

namespace luong::nmt {
namespace {

Vocabulary target_vocab() { return Vocabulary::from_tokens({"<pad>", "<unk>", "<s>", "</s>", "x", "y"}); }

TEST(TranslatorUnkReplace, ReversedSourceAttentionIsMappedBackToSourceOrder) {
  // Attention as beam search returns it for a reverse_source model: column j is encoder position j, which
  // read source word n-1-j. Output step 0 attends encoder position 2 (= source word 0, "alpha"), step 1
  // encoder position 0 (= source word 2, "charlie").
  const std::vector<std::vector<float>> encoder_order{{0.1f, 0.2f, 0.7f}, {0.6f, 0.3f, 0.1f}, {0.3f, 0.3f, 0.4f}};
  const std::vector<std::vector<float>> source_order = attention_in_source_order(encoder_order, true);
  EXPECT_EQ(source_order,
            (std::vector<std::vector<float>>{{0.7f, 0.2f, 0.1f}, {0.1f, 0.3f, 0.6f}, {0.4f, 0.3f, 0.3f}}));
  EXPECT_EQ(attention_in_source_order(encoder_order, false), encoder_order);

  const std::vector<std::string> src{"alpha", "bravo", "charlie"};
  TranslateOptions o;
  o.unk_replace = true;
  const std::vector<int64_t> ids{Vocabulary::kUnk, Vocabulary::kUnk};
  EXPECT_EQ(output_tokens(ids, source_order, src, target_vocab(), o), (std::vector<std::string>{"alpha", "charlie"}));
  // Used unmapped, the same rows would copy the mirrored words (the bug this guards against).
  EXPECT_EQ(output_tokens(ids, encoder_order, src, target_vocab(), o), (std::vector<std::string>{"charlie", "alpha"}));
}

TEST(TranslatorUnkReplace, DictionaryAndKnownWords) {
  const std::vector<std::vector<float>> att{{0.0f, 1.0f}, {1.0f, 0.0f}, {0.5f, 0.5f}};
  const std::vector<std::string> src{"haus", "katze"};
  TranslateOptions o;
  o.unk_replace = true;
  o.dictionary = {{"katze", "cat"}};
  const std::vector<int64_t> ids{Vocabulary::kUnk, 4, Vocabulary::kUnk};
  EXPECT_EQ(output_tokens(ids, att, src, target_vocab(), o), (std::vector<std::string>{"cat", "x", "haus"}));
  o.unk_replace = false;
  EXPECT_EQ(output_tokens(ids, att, src, target_vocab(), o), (std::vector<std::string>{"<unk>", "x", "<unk>"}));
}

}  // namespace
}  // namespace luong::nmt
