// Run-directory helpers: checkpoints are `<run_dir>/ckpt-<step>.h5`; `best.h5` is a hard link (or, where
// the file system has none, a copy) of the best one, so retention can delete its ckpt file safely.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"

namespace luong {

struct CheckpointFile {
  int64_t step = 0;
  std::string path;
};

struct SkippedCheckpoint {
  std::string path;
  std::string reason;  // the luong::Error message
};

struct LatestCheckpoint {
  std::optional<CheckpointFile> file;       // nullopt when no valid checkpoint exists
  std::optional<Checkpoint> checkpoint;     // the verified contents of `file`
  std::vector<SkippedCheckpoint> skipped;   // newer files that failed to load, newest first (caller logs them)
};

// "<run_dir>/ckpt-<step>.h5".
std::string checkpoint_path(const std::string& run_dir, int64_t step);
// Every ckpt-<step>.h5 in run_dir sorted by increasing step (temp files and best.h5 are not listed).
// A missing run_dir gives an empty list.
std::vector<CheckpointFile> list_checkpoints(const std::string& run_dir);
// The newest checkpoint that loads and verifies, skipping corrupted or truncated ones, and those for which
// `unusable` (when given) returns a reason (e.g. a model without training state where one is needed).
LatestCheckpoint find_latest_valid(const std::string& run_dir,
                                   const std::function<std::string(const Checkpoint&)>& unusable = {});
// "<run_dir>/best.h5".
std::string best_checkpoint_path(const std::string& run_dir);
// True when run_dir holds a ckpt-<step>.h5 or best.h5: a run lives there.
bool holds_checkpoints(const std::string& run_dir);
// Deletes the temp files (`<name>.tmp.<pid>`) that saves killed midway left in run_dir, skipping those of
// a process still alive on this host, and returns their paths.
std::vector<std::string> remove_stale_temp_files(const std::string& run_dir);
// Makes <run_dir>/best.h5 the same file as ckpt-<step>.h5 (atomically replacing an older best.h5).
void mark_best(const std::string& run_dir, int64_t step);
// Deletes all but the newest `keep_last` ckpt-<step>.h5 files (best.h5 is never touched) and returns the
// deleted paths.
std::vector<std::string> apply_retention(const std::string& run_dir, int64_t keep_last);

}  // namespace luong
