#include "launch/rank_agreement.h"

#include <map>
#include <vector>

#include "framework/dist/checksum.h"
#include "framework/io/config_leaves.h"

namespace luong::cli {
namespace {

uint64_t hash_of(const std::string& text) {
  Fnv1a h;
  h.add_bytes(text.data(), text.size());
  return h.value();
}

// The ranks whose value differs from rank 0's, as "1, 3"; "" when all agree.
std::string ranks_differing(const std::vector<uint64_t>& all) {
  std::string out;
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) out += str(out.empty() ? "" : ", ", r);
  return out;
}

// Keys that may differ between the processes of a job: where each node finds its copy of the data (the
// copies' contents are compared by check_data_agrees), and settings that change nothing the ranks compute
// together (the watchdog's patience, rank 0's log cadence).
bool may_differ(const std::string& key) {
  static const char* const kKeys[] = {"data.train_src", "data.train_tgt", "data.valid_src", "data.valid_tgt",
                                      "data.test_src",  "data.test_tgt",  "dist.timeout_s", "train.log_every"};
  for (const char* k : kKeys)
    if (key == k) return true;
  return false;
}

}  // namespace

void check_configs_agree(ProcessGroup& group, const std::string& config_text) {
  if (group.size() == 1) return;
  const std::string here = str("rank ", group.rank());
  std::map<std::string, std::string> keys = config_leaves(config_text);
  std::erase_if(keys, [](const auto& kv) { return may_differ(kv.first); });
  std::string compared;
  for (const auto& [key, value] : keys) compared += key + "=" + value + "\n";
  if (!ranks_differing(group.all_gather(hash_of(compared))).empty()) {
    // Every process has the schema's full key set, so the per-key gathers below run in step; a differing
    // key count (another luong version) is said as such.
    if (const std::string differ = ranks_differing(group.all_gather(keys.size())); !differ.empty())
      LUONG_FAIL("the processes of this job resolved configs with different keys (rank(s) ", differ,
                 " differ from rank 0): is every node running the same luong?");
    std::string listed;
    for (const auto& [key, value] : keys) {
      if (const std::string differ = ranks_differing(group.all_gather(hash_of(key + "=" + value))); !differ.empty())
        listed +=
            str(listed.empty() ? "" : "; ", key, " (rank(s) ", differ, " differ from rank 0; ", here, ": ", value, ")");
    }
    LUONG_FAIL("the processes of this job were started with different configs: ", listed,
               ". Give every process the same --config and --set options.");
  }
}

void check_data_agrees(ProcessGroup& group, uint64_t data_fingerprint, const std::string& data) {
  if (group.size() == 1) return;
  if (const std::string differ = ranks_differing(group.all_gather(data_fingerprint)); !differ.empty())
    LUONG_FAIL("the processes of this job read different data: rank(s) ", differ, " differ from rank 0 (rank ",
               group.rank(), ": ", data, "). Every process must read the same files (copies on each node must be ",
               "identical).");
}

}  // namespace luong::cli
