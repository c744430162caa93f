#include "models/nmt/alignment_error_rate.h"

#include <charconv>
#include <sstream>

#include "framework/core/error.h"

namespace luong::nmt {
namespace {

bool parse_index(std::string_view text, int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty() && out >= 0;
}

}  // namespace

GoldAlignment parse_gold_alignment(const std::string& line, bool one_based, const std::string& where) {
  GoldAlignment gold;
  std::istringstream in(line);
  for (std::string link; in >> link;) {
    const size_t mark = link.find_first_of("-?p");
    int i = 0, j = 0;
    if (mark == std::string::npos || !parse_index(std::string_view(link).substr(0, mark), i) ||
        !parse_index(std::string_view(link).substr(mark + 1), j))
      LUONG_FAIL(where, ": '", link, "' is not a link (i-j for a sure one, i?j or ipj for a possible one)");
    if (one_based) {
      if (i == 0 || j == 0) LUONG_FAIL(where, ": '", link, "' counts from 0, but the words are counted from 1 here");
      --i, --j;
    }
    if (link[mark] == '-') gold.sure.emplace(i, j);
    gold.possible.emplace(i, j);
  }
  return gold;
}

GoldAlignment reversed(const GoldAlignment& gold) {
  GoldAlignment out;
  for (const auto& [i, j] : gold.sure) out.sure.emplace(j, i);
  for (const auto& [i, j] : gold.possible) out.possible.emplace(j, i);
  return out;
}

void AerCounts::add(const Links& a, const GoldAlignment& gold) {
  proposed += static_cast<int64_t>(a.size());
  sure += static_cast<int64_t>(gold.sure.size());
  for (const auto& link : a) {
    proposed_sure += gold.sure.count(link) ? 1 : 0;
    proposed_possible += gold.possible.count(link) ? 1 : 0;
  }
}

double AerCounts::aer() const {
  const int64_t total = proposed + sure;
  return total == 0 ? 0.0 : 1.0 - static_cast<double>(proposed_sure + proposed_possible) / static_cast<double>(total);
}

double AerCounts::precision() const {
  return proposed == 0 ? 0.0 : static_cast<double>(proposed_possible) / static_cast<double>(proposed);
}

double AerCounts::recall() const {
  return sure == 0 ? 0.0 : static_cast<double>(proposed_sure) / static_cast<double>(sure);
}

}  // namespace luong::nmt
