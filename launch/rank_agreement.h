// Before an mpirun job trains, every process must have resolved the same config and read the same data.
// Nothing else would notice a difference: another optim.lr or seed trains silently divergent replicas,
// another train.max_steps leaves one rank waiting in a collective until the watchdog, other data
// duplicates or skips pairs. (Differences in parameter shapes are caught later by the Reducer, but only as
// a hash.) The errors name the differing config keys, with this process's value.
#pragma once
#include <cstdint>
#include <string>

#include "framework/dist/process_group.h"

namespace luong::cli {

// Throws luong::Error on every process alike unless all processes resolved the same config (Config::dump()
// text), except for the data files' paths (node-local copies; their contents are compared by
// check_data_agrees), dist.timeout_s and train.log_every. The error lists each differing key, the ranks
// that differ from rank 0 and this process's value.
// One all-gather when they agree; one more per config key only when they differ.
void check_configs_agree(ProcessGroup& group, const std::string& config_text);

// The same for the data: a fingerprint of what each process read (NmtTask::data_fingerprint); `data`
// describes this process's data for the message.
void check_data_agrees(ProcessGroup& group, uint64_t data_fingerprint, const std::string& data);

}  // namespace luong::cli
