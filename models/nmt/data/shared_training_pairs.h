// The training pairs of an mpirun job, one copy a node: every rank encodes the same pairs (and checks that
// they agree), so the ranks of a node can read one copy in shared memory instead of holding one each
// (ExampleList::share_on_node). About 1.2 GB a rank for WMT'14 English-German; eight ranks a node held
// eight copies.
#pragma once
#include <functional>
#include <string>

#include "models/nmt/data/example_list.h"

namespace luong::nmt {

// Collective over `group`; nothing for a group of one. Logs (through `log`, rank 0's) one line saying how
// much was shared; a rank that keeps its own copy (no room in /dev/shm, say) prints a warning with its rank
// and the reason on stderr and trains on as before. LUONG_SHARE_TRAINING_PAIRS=0 (on any rank) turns it off.
void share_training_pairs(ProcessGroup& group, ExampleList& pairs, const std::function<void(const std::string&)>& log);

}  // namespace luong::nmt
