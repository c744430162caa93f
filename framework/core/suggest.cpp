#include "framework/core/suggest.h"

#include <algorithm>
#include <cctype>

namespace luong {

size_t typo_distance(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  // Three rows of the dynamic programme: the swap looks two rows back.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = prev[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_name(std::string_view typed, const std::vector<std::string>& names) {
  // A third of the length: "evl" may be "eval", but "lr" is not a typo of "l2" nor "x" of "dot".
  const size_t allowed = std::clamp<size_t>(typed.size() / 3, 1, 3);
  const std::string* best = nullptr;
  size_t best_distance = allowed + 1;
  for (const std::string& name : names) {
    const size_t d = typo_distance(typed, name);
    if (d < best_distance) {
      best = &name;
      best_distance = d;
    }
  }
  return best && best_distance > 0 ? *best : std::string();
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& names) {
  const std::string name = closest_name(typed, names);
  return name.empty() ? std::string() : "; did you mean '" + name + "'?";
}

}  // namespace luong
