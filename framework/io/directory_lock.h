// An exclusive lock on a directory for the life of the process: `luong train` holds <run_dir>/.lock and
// `luong sweep` <out>/.lock, so a second process on the same directory (which would delete or interleave
// the first one's files) is refused, naming the holder. flock(2): the lock goes with the process however
// it ends, so a crash never leaves a stale lock (it does not lock across hosts on some network file systems).
#pragma once
#include <string>

namespace luong {

// Takes the lock or throws luong::Error "<what> <dir> is in use by another <holder> (pid P on HOST): ...".
// `what` names the directory's role ("--run-dir", "--out") and `holder` the command ("luong train").
void lock_directory(const std::string& dir, const std::string& what, const std::string& holder);

}  // namespace luong
