// "Did you mean ...?" for a mistyped name: an unknown subcommand, option, config key or registered name.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace luong {

// Edit distance counting insertions, deletions, substitutions and swaps of two neighbouring characters
// (Damerau's optimal string alignment), ignoring ASCII case: "chekpoint" -> "checkpoint" is 1, "tarin" ->
// "train" is 1.
size_t typo_distance(std::string_view a, std::string_view b);

// The name in `names` closest to `typed` when it is close enough to be a typo of it (a distance of at most a
// third of the typed length, at least 1, at most 3), else "". Of equally close names the first is taken.
std::string closest_name(std::string_view typed, const std::vector<std::string>& names);

// "; did you mean 'x'?" for the closest name, or "" when none is close: appended to an error's text.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& names);

}  // namespace luong
