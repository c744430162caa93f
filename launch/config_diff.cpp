#include "launch/config_diff.h"

#include <map>
#include <optional>

#include "framework/core/error.h"
#include "framework/io/config_leaves.h"

namespace luong::cli {
namespace {

// Keys that change how long a run goes, what it logs or keeps, or how it is evaluated afterwards, but not
// the parameters a given step produces (train.init_from: a resumed run's parameters, vocabularies and units
// come from its own checkpoint, whatever the key now names).
bool keeps_steps_identical(const std::string& key) {
  static const char* const kKeys[] = {
      "train.max_steps",          "train.max_epochs",       "train.log_every",   "train.checkpoint_every",
      "train.checkpoint_minutes", "train.keep_checkpoints", "data.test_src",     "data.test_tgt",
      "dist.check_every",         "train.valid_bleu",       "train.tensorboard", "train.valid_translations",
      "train.init_from"};
  for (const char* k : kKeys)
    if (key == k) return true;
  return key.rfind("eval.", 0) == 0;
}

// Keys added after checkpoints were first written, with the value that trains as luong did before the key
// existed: a saved config without the key and a current one with that value are the same run.
bool same_as_absent(const std::string& key, const std::string& value) {
  return (key == "train.accumulate" && value == "1") || (key == "train.valid_bleu" && value == "false") ||
         (key == "train.valid_metric" && value == "ppl") || (key == "data.bpe_merges" && value == "0") ||
         (key == "data.bpe_joint" && value == "true") || (key == "eval.chrf_word_order" && value == "0") ||
         (key == "train.tensorboard" && value == "false") ||
         (key == "train.checkpoint_minutes" && (value == "0" || value == "0.0")) ||
         (key == "train.valid_translations" && value == "false") ||
         ((key == "data.bpe_codes" || key == "data.bpe_codes_tgt" || key == "train.init_from") &&
          (value.empty() || value == "\"\"" || value == "''"));
}

// The global batch a step sees: per-process batch x processes x accumulated parts (2 processes x 8 sentences
// train as 1 x 16, and as 1 x 8 accumulated twice). Empty when the config does not give the batch size.
std::optional<int64_t> global_batch(const std::map<std::string, std::string>& leaves, int64_t world) {
  const auto batch = leaves.find("train.batch_size"), parts = leaves.find("train.accumulate");
  if (batch == leaves.end()) return std::nullopt;
  try {
    return std::stoll(batch->second) * world * (parts == leaves.end() ? 1 : std::stoll(parts->second));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<std::string> config_changes(const std::string& saved, const std::string& current, int64_t saved_world,
                                        int64_t current_world) {
  const auto before = config_leaves(saved), after = config_leaves(current);
  const std::optional<int64_t> global_before = global_batch(before, saved_world),
                               global_after = global_batch(after, current_world);
  const bool same_global = global_before && global_before == global_after;
  std::vector<std::string> out;
  auto add = [&](const std::string& key, const std::string& old_value, const std::string& new_value) {
    const bool same_steps =
        keeps_steps_identical(key) || ((key == "train.batch_size" || key == "train.accumulate") && same_global);
    out.push_back((same_steps ? "=" : "") + key + ": " + old_value + " -> " + new_value);
  };
  // The data position is counted in global batches: with the per-process batch unchanged, another number
  // of processes changes the global batch (unless train.accumulate makes up for it), and the resumed run
  // sees other batches than the original would.
  const auto batch_before = before.find("train.batch_size"), batch_after = after.find("train.batch_size");
  if (saved_world != current_world && !same_global && batch_before != before.end() && batch_after != after.end() &&
      batch_before->second == batch_after->second)
    out.push_back(str("processes: ", saved_world, " -> ", current_world, " with train.batch_size ",
                      batch_after->second, " per process (the global batch changes)"));
  for (const ChangedLeaf& c : changed_leaves(before, after))
    if (!c.absent_before || (!before.empty() && !same_as_absent(c.key, c.after))) add(c.key, c.before, c.after);
  return out;
}

}  // namespace luong::cli
