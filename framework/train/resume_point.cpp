#include "framework/train/resume_point.h"

#include <filesystem>

#include "framework/core/error.h"
#include "framework/io/checkpoint_dir.h"

namespace luong {
namespace {

std::string skipped_message(const std::string& path, const std::string& reason) {
  return "warning: skipping " + about_checkpoint(path, reason);
}

std::optional<Checkpoint> newest_usable(const std::string& run_dir, std::vector<std::string>& skipped,
                                        const std::function<void(const std::string&)>& warn) {
  // A checkpoint that loads but holds only a model (luong average's output saved as ckpt-<step>.h5) cannot be
  // resumed: skipped like a damaged one, so that the run continues from the newest that can.
  LatestCheckpoint latest = find_latest_valid(run_dir, [](const Checkpoint& c) {
    return c.state.ints.contains("trainer/step") ? std::string()
                                                 : "it has no trainer state (an averaged or exported model)";
  });
  for (const auto& s : latest.skipped) {
    warn(skipped_message(s.path, s.reason));
    skipped.push_back(s.path);
  }
  if (latest.checkpoint) return std::move(latest.checkpoint);
  if (latest.skipped.empty()) return std::nullopt;  // nothing saved yet: a fresh start
  // Step checkpoints exist but none loads. Starting over would overwrite the run's history (and best.h5):
  // resume from best.h5 if that loads, else stop and let the user decide.
  const std::string best = best_checkpoint_path(run_dir);
  if (std::filesystem::exists(best)) {
    try {
      Checkpoint c = load_checkpoint(best);
      warn("warning: no step checkpoint in " + run_dir + " loads; resuming from " + best);
      return c;
    } catch (const Error& e) {
      warn(skipped_message(best, e.what()));
    }
  }
  std::string names;
  for (const auto& s : latest.skipped) names += (names.empty() ? "" : ", ") + s.path;
  LUONG_FAIL("--resume auto: ", run_dir, " holds checkpoints but none loads (", names,
             "; reasons above). Move them away to start this run over, or resume from a checkpoint path.");
}

}  // namespace

std::string about_checkpoint(const std::string& path, const std::string& what) {
  return what.find(path) != std::string::npos ? what : "checkpoint " + path + ": " + what;
}

ResumePoint find_resume_point(const std::string& resume, const std::string& run_dir,
                              const std::function<void(const std::string&)>& warn) {
  ResumePoint out;
  if (resume.empty()) return out;
  try {
    // An explicit path must load: its errors are the resume's.
    out.checkpoint = resume == "auto" ? newest_usable(run_dir, out.skipped, warn) : load_checkpoint(resume);
  } catch (const Error&) {
    out.error = std::current_exception();
  }
  return out;
}

}  // namespace luong
