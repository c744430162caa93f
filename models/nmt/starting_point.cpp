#include "models/nmt/starting_point.h"

#include <filesystem>

#include "framework/core/error.h"
#include "framework/io/config_leaves.h"
#include "framework/io/config_schema.h"

namespace luong::nmt {
namespace {

// The network, and the tokens its embedding rows stand for (data.lowercase changes them).
bool decides_the_network(const std::string& key) { return describes_the_network(key) || key == "data.lowercase"; }

bool decides_the_vocabularies(const std::string& key) {
  static const char* const kKeys[] = {"data.src_vocab_size", "data.tgt_vocab_size", "data.min_freq",
                                      "data.bpe_merges",     "data.bpe_joint",      "data.bpe_codes",
                                      "data.bpe_codes_tgt"};
  for (const char* k : kKeys)
    if (key == k) return true;
  return false;
}

// "key is X in its run, Y here" for each key `pick` selects whose values differ.
std::vector<std::string> differences(const std::string& there, const std::string& here,
                                     bool (*pick)(const std::string&)) {
  std::vector<std::string> out;
  for (const ChangedLeaf& c : changed_leaves(config_leaves(there), config_leaves(here)))
    if (pick(c.key)) out.push_back(str(c.key, " is ", c.before, " in its run, ", c.after, " here"));
  return out;
}

}  // namespace

StartingPoint read_starting_point(const std::string& path, const std::string& config_text, bool own_vocabularies) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    LUONG_FAIL(
        "train.init_from: ", path,
        std::filesystem::is_directory(path, ec) ? " is a directory (name a checkpoint file in it)" : " does not exist");
  StartingPoint start;
  try {
    start.checkpoint = load_checkpoint(path);
    start.run = read_stored_run(start.checkpoint);
  } catch (const Error& e) {
    LUONG_FAIL("train.init_from: ", e.what());
  }
  const auto step = start.checkpoint.state.ints.find("trainer/step");
  if (step != start.checkpoint.state.ints.end()) start.step = step->second;
  start.own_vocabularies = own_vocabularies;
  const std::vector<std::string> differ =
      differences(start.run.config_text, config_text, own_vocabularies ? describes_the_network : decides_the_network);
  if (!differ.empty())
    LUONG_FAIL("train.init_from: checkpoint ", path, " holds another model than this config describes (",
               join_names(differ, "; "),
               "): set these keys as its run did (model.dropout, model.init and model.init_range may differ)");
  if (!own_vocabularies)
    start.unused_vocabulary_settings = differences(start.run.config_text, config_text, decides_the_vocabularies);
  return start;
}

std::optional<StartingPoint> resumed_starting_point(const Checkpoint& checkpoint) {
  StoredRun run = read_stored_run(checkpoint);
  if (run.cfg.train.init_from.empty()) return std::nullopt;
  StartingPoint start;
  start.checkpoint = checkpoint;  // tensors share their storage: no copy of the parameters
  start.run = std::move(run);
  const auto step = checkpoint.state.ints.find("trainer/step");
  if (step != checkpoint.state.ints.end()) start.step = step->second;
  start.resumed = true;
  start.own_vocabularies = start.run.cfg.train.init_vocabulary == "data";
  return start;
}

}  // namespace luong::nmt
