#include "models/nmt/starting_point.h"

#include <filesystem>
#include <map>

#include "framework/core/error.h"
#include "framework/io/config_leaves.h"

namespace luong::nmt {
namespace {

// Keys of the model section that do not change which network the parameters belong to: regularisation, and
// how fresh parameters would be drawn (these are loaded instead).
bool free_to_differ(const std::string& key) {
  return key == "model.dropout" || key == "model.init" || key == "model.init_range";
}

bool decides_the_network(const std::string& key) {
  return (key.rfind("model.", 0) == 0 && !free_to_differ(key)) || key == "data.lowercase";
}

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
  const std::map<std::string, std::string> a = config_leaves(there), b = config_leaves(here);
  std::vector<std::string> out;
  for (const auto& [key, value] : b) {
    if (!pick(key)) continue;
    const auto it = a.find(key);
    const std::string old_value = it == a.end() ? "(absent)" : it->second;
    if (old_value != value) out.push_back(str(key, " is ", old_value, " in its run, ", value, " here"));
  }
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : "; ") + s;
  return out;
}

}  // namespace

StartingPoint read_starting_point(const std::string& path, const std::string& config_text) {
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
  const std::vector<std::string> differ = differences(start.run.config_text, config_text, decides_the_network);
  if (!differ.empty())
    LUONG_FAIL("train.init_from: checkpoint ", path, " holds another model than this config describes (",
               joined(differ),
               "): set these keys as its run did (model.dropout, model.init and model.init_range may differ)");
  start.unused_vocabulary_settings = differences(start.run.config_text, config_text, decides_the_vocabularies);
  return start;
}

}  // namespace luong::nmt
