// What changed between the config a checkpoint was trained with and the config a resumed run is given, so
// `luong train --resume` can say so instead of silently continuing with other settings.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace luong::cli {

// Every key whose value differs between two resolved configs (Config::dump() text), in key order, as
// "section.key: old -> new". Keys that do not change the steps a resumed run takes (its limits, logging,
// checkpointing and the evaluation settings) are prefixed with "=". train.batch_size is per process: a
// change of it or of train.accumulate that keeps batch_size x world size x accumulate (the global batch) is
// such a key too.
std::vector<std::string> config_changes(const std::string& saved, const std::string& current, int64_t saved_world,
                                        int64_t current_world);

}  // namespace luong::cli
