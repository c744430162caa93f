#include "launch/config_diff.h"

#include <map>

#include "framework/core/error.h"
#include "framework/io/config_leaves.h"

namespace luong::cli {
namespace {

// Keys that change how long a run goes, what it logs or keeps, or how it is evaluated afterwards, but not
// the parameters a given step produces.
bool keeps_steps_identical(const std::string& key) {
  static const char* const kKeys[] = {"train.max_steps",        "train.max_epochs", "train.log_every",
                                      "train.checkpoint_every", "train.keep_checkpoints", "data.test_src",
                                      "data.test_tgt",          "dist.check_every"};
  for (const char* k : kKeys)
    if (key == k) return true;
  return key.rfind("eval.", 0) == 0;
}

// The global batch (per-process batch x processes) is what a step sees: 2 x 8 sentences train as 1 x 16.
bool same_global_batch(const std::string& old_value, const std::string& new_value, int64_t old_world,
                       int64_t new_world) {
  try {
    return std::stoll(old_value) * old_world == std::stoll(new_value) * new_world;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::vector<std::string> config_changes(const std::string& saved, const std::string& current, int64_t saved_world,
                                        int64_t current_world) {
  const auto before = config_leaves(saved), after = config_leaves(current);
  std::vector<std::string> out;
  auto add = [&](const std::string& key, const std::string& old_value, const std::string& new_value) {
    const bool same_steps =
        keeps_steps_identical(key) ||
        (key == "train.batch_size" && same_global_batch(old_value, new_value, saved_world, current_world));
    out.push_back((same_steps ? "=" : "") + key + ": " + old_value + " -> " + new_value);
  };
  // The data position is counted in global batches: with the per-process batch unchanged, another number
  // of processes changes the global batch, and the resumed run sees other batches than the original would.
  const auto batch_before = before.find("train.batch_size"), batch_after = after.find("train.batch_size");
  if (saved_world != current_world && batch_before != before.end() && batch_after != after.end() &&
      batch_before->second == batch_after->second)
    out.push_back(str("processes: ", saved_world, " -> ", current_world, " with train.batch_size ",
                      batch_after->second, " per process (the global batch changes)"));
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    if (it == before.end()) {
      if (!before.empty()) add(key, "(absent)", value);
    } else if (it->second != value) {
      add(key, it->second, value);
    }
  }
  return out;
}

}  // namespace luong::cli
