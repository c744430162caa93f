// A resolved config (Config::dump() text) as flat "section.key" -> value pairs, so that two configs can be
// compared key by key: a resume against its checkpoint's config, the ranks of a job, a sweep trial against
// the config it was trained with.
#pragma once
#include <map>
#include <string>

namespace luong {

// Every leaf of the YAML text as "section.key" -> its value as flow YAML text; empty if it does not parse.
std::map<std::string, std::string> config_leaves(const std::string& text);

}  // namespace luong
