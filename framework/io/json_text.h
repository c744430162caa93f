// The text of every JSON record luong writes (metrics.jsonl, --json lines, a sweep's trial records).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace luong {

// j as JSON text (one line, or indented by `indent` spaces). A string that is not UTF-8 (a Latin-1 file name
// given on the command line, an error message quoting one) is written with U+FFFD in place of each invalid
// byte: nlohmann's default dump throws on it, which would turn a finished run's summary line into an error.
// Values that are read back and compared (configs, sweep settings) are UTF-8 already: config and sweep-spec
// text is checked when loaded.
std::string json_text(const nlohmann::json& j, int indent = -1);

}  // namespace luong
