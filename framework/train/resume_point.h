// Which checkpoint a run resumes from: --resume auto's newest checkpoint that loads (or best.h5 when no step
// checkpoint does), or the file --resume names. Found before the run's task is built, so that the task can
// take what the checkpoint holds (a run started with train.init_from takes its vocabularies from it, not
// from the starting checkpoint again), and the file is read once: the trainer restores the same one.
#pragma once
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "framework/io/checkpoint.h"

namespace luong {

struct ResumePoint {
  std::optional<Checkpoint> checkpoint;  // none: a fresh start (no --resume, or nothing saved yet)
  // This process could not find or read its checkpoint. Kept rather than thrown, so that under mpirun every
  // process fails together with one explanation (the trainer agrees on the resume point before rethrowing).
  std::exception_ptr error;
  std::vector<std::string> skipped;  // the files --resume auto could not use, newest first
};

// A loader's message about the checkpoint at `path`, naming the path once: the reader's messages start with
// "checkpoint <path>: ...", those of the task, optimizer or iterator do not.
std::string about_checkpoint(const std::string& path, const std::string& what);

// `resume` is "" (fresh), "auto" (newest valid checkpoint in run_dir) or a checkpoint path. Each file
// --resume auto skips is reported through `warn` ("warning: skipping checkpoint ...").
ResumePoint find_resume_point(const std::string& resume, const std::string& run_dir,
                              const std::function<void(const std::string&)>& warn);

}  // namespace luong
