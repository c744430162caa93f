// Parts of a model named in a config (train.init_skip, train.freeze) at the unit level: the list is read as written, a
// part covers the parameters under its module path (not a sibling whose name merely starts alike), and a name that is
// no part of the model is an error that suggests the closest part.
#include "models/nmt/model_parts.h"

#include <gtest/gtest.h>

#include "models/nmt/model.h"
#include "models/nmt/nmt_task.h"
#include "tests/support/error_of.h"

namespace luong::nmt {
namespace {

using luong::testing::error_of;

ModelConfig two_layers(bool tie) {
  ModelConfig c;
  c.src_vocab = 9, c.tgt_vocab = 8, c.pad_id = 0, c.layers = 2, c.hidden_size = 6, c.embedding_size = tie ? 6 : 5;
  c.dropout = 0.0, c.attention = "general", c.tie_embeddings = tie;
  return c;
}

TEST(PartList, SplitsOnCommasAndTrimsSpaces) {
  EXPECT_EQ(part_list(" decoder , encoder.lstm.1,,"), (std::vector<std::string>{"decoder", "encoder.lstm.1"}));
  EXPECT_TRUE(part_list("").empty());
  EXPECT_TRUE(part_list(" , ").empty());
}

TEST(ModelParts, APartCoversTheParametersUnderItsModulePath) {
  const NmtModel m(two_layers(false));
  EXPECT_EQ(parameters_in_parts("train.init_skip", "decoder.output", m),
            (std::set<std::string>{"decoder.output.weight", "decoder.output.bias"}));
  EXPECT_EQ(parameters_in_parts("train.init_skip", "encoder.lstm.1, decoder.combine.weight", m),
            (std::set<std::string>{"encoder.lstm.1.weight_ih", "encoder.lstm.1.weight_hh", "encoder.lstm.1.bias",
                                   "decoder.combine.weight"}));
  std::set<std::string> decoder;
  for (const auto& [name, v] : m.named_parameters())
    if (name.rfind("decoder.", 0) == 0) decoder.insert(name);
  EXPECT_EQ(parameters_in_parts("train.init_skip", "decoder", m), decoder);
  EXPECT_TRUE(parameters_in_parts("train.init_skip", "", m).empty());
}

TEST(ModelParts, IndicesArePositionsInNamedParametersInOrder) {
  const NmtModel m(two_layers(false));
  const auto named = m.named_parameters();
  const std::vector<size_t> got = parameter_indices_in_parts("train.freeze", "decoder.output, encoder.embedding", m);
  std::vector<std::string> names;
  for (size_t i : got) names.push_back(named.at(i).first);
  EXPECT_EQ(names,
            (std::vector<std::string>{"encoder.embedding.weight", "decoder.output.weight", "decoder.output.bias"}));
  EXPECT_THROW(parameter_indices_in_parts("train.freeze", "decoder.outptu", m), Error);
}

TEST(ModelParts, ANameThatIsNoPartIsRefusedWithTheClosestPart) {
  // With tied embeddings the output layer is a bias alone: "decoder.output" is not a prefix of its module path.
  const NmtModel tied(two_layers(true));
  EXPECT_EQ(parameters_in_parts("train.init_skip", "decoder.output_bias", tied),
            (std::set<std::string>{"decoder.output_bias"}));
  const std::string e = error_of([&] { parameters_in_parts("train.init_skip", "decoder.output", tied); });
  EXPECT_EQ(e.rfind("train.init_skip: 'decoder.output' names no part of this model; did you mean "
                    "'decoder.output_bias'? (its parts are module paths and parameter names as `luong` names them: "
                    "encoder.embedding, encoder.lstm, decoder.output_bias, decoder.embedding, decoder.lstm, "
                    "decoder.attention, decoder.combine, and the layers and parameters under them)",
                    0),
            0u)
      << e;
  EXPECT_NE(error_of([&] {
              parameters_in_parts("train.init_skip", "decoder, encoder.lstm.2", tied);
            }).find("'encoder.lstm.2'"),
            std::string::npos);
}

TEST(DropSkipped, RemovesTheEntriesFromTheCheckpointAndTheDestinations) {
  Generator g(3);
  const NmtModel m(two_layers(false), g);
  Checkpoint source;
  source.state = model_tensors(m);
  StateDict destinations = model_tensors(m);
  const size_t all = source.state.tensors.size();
  drop_skipped(parameters_in_parts("train.init_skip", "decoder.output", m), source, destinations);
  EXPECT_EQ(source.state.tensors.size(), all - 2);
  EXPECT_EQ(destinations.tensors.size(), all - 2);
  EXPECT_FALSE(source.state.tensors.contains("model/decoder/output/weight"));
  EXPECT_FALSE(destinations.tensors.contains("model/decoder/output/bias"));
}

}  // namespace
}  // namespace luong::nmt
