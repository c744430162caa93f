#include "models/nmt/data/shared_training_pairs.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "framework/core/error.h"
#include "framework/dist/process_group.h"

namespace luong::nmt {

void share_training_pairs(ProcessGroup& group, ExampleList& pairs, const std::function<void(const std::string&)>& log) {
  if (group.size() == 1) return;
  // LUONG_SHARE_TRAINING_PAIRS=0 on any rank keeps a copy on every rank (all of them must skip the collectives).
  const char* env = std::getenv("LUONG_SHARE_TRAINING_PAIRS");
  const std::vector<uint64_t> off = group.all_gather(env && std::string(env) == "0" ? 1 : 0);
  if (std::count(off.begin(), off.end(), uint64_t{1}) > 0) {
    log("data: every process holds its own copy of the training pairs (LUONG_SHARE_TRAINING_PAIRS=0)");
    return;
  }
  std::string why_not;
  const bool shared = pairs.share_on_node(group, why_not);
  // A node of one process has nothing to share: not worth a warning.
  if (!shared && group.local_size() > 1)
    std::cerr << "luong: rank " << group.rank() << " of " << group.size()
              << ": warning: keeps its own copy of the training pairs (" << why_not << ")\n";
  const std::vector<uint64_t> flags = group.all_gather(shared ? 1 : 0);
  const auto sharing = std::count(flags.begin(), flags.end(), uint64_t{1});
  if (sharing == 0) return;
  char mb[32];
  std::snprintf(mb, sizeof mb, "%.1f MB", static_cast<double>(pairs.bytes()) / 1e6);
  log(str("data: ", sharing, " of ", group.size(), " processes read the training pairs from one shared copy per node (",
          mb, ")"));
}

}  // namespace luong::nmt
