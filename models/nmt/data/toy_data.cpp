#include "models/nmt/data/toy_data.h"

#include <filesystem>
#include <fstream>

#include "framework/core/error.h"
#include "framework/core/philox.h"

namespace luong::nmt {
namespace {

const char* const kSrcWords[16] = {"ba", "ko", "mi", "tu", "re", "sa", "lo", "ne",
                                   "di", "fu", "ga", "pe", "zo", "hi", "ja", "wu"};
const char* const kTgtWords[16] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
                                   "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa"};

// A bijection on 0..15 (5 is coprime with 16), so every source word has exactly one translation.
int translate_word(int w) { return (w * 5 + 3) % 16; }

}  // namespace

std::vector<std::pair<std::string, std::string>> toy_pairs(const ToyDataOptions& o, int split, int64_t count) {
  LUONG_CHECK(o.min_len >= 1 && o.max_len >= o.min_len, "toy data: bad lengths [", o.min_len, ", ", o.max_len, "]");
  // Each split draws from its own counter range, so changing one split's size leaves the others unchanged.
  Generator g(o.seed, static_cast<uint64_t>(split) << 40);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    const auto len = o.min_len + static_cast<int64_t>(g.below(static_cast<uint64_t>(o.max_len - o.min_len + 1)));
    std::vector<int> words(static_cast<size_t>(len));
    for (int& w : words) w = static_cast<int>(g.below(16));
    std::string src, tgt;
    for (size_t i = 0; i < words.size(); ++i) {
      if (i > 0) src += ' ', tgt += ' ';
      src += kSrcWords[words[i]];
      tgt += kTgtWords[translate_word(words[words.size() - 1 - i])];
    }
    out.emplace_back(src + " .", tgt + " .");
  }
  return out;
}

std::vector<std::string> write_toy_data(const std::string& dir, const ToyDataOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) LUONG_FAIL("toy data: cannot create directory '", dir, "': ", ec.message());
  const std::pair<const char*, int64_t> splits[3] = {{"train", o.train}, {"valid", o.valid}, {"test", o.test}};
  std::vector<std::string> written;
  for (int s = 0; s < 3; ++s) {
    const auto pairs = toy_pairs(o, s, splits[s].second);
    const std::string base = (std::filesystem::path(dir) / splits[s].first).string();
    std::ofstream src(base + ".src", std::ios::binary), tgt(base + ".tgt", std::ios::binary);
    if (!src || !tgt) LUONG_FAIL("toy data: cannot write '", base, ".src/.tgt'");
    for (const auto& [a, b] : pairs) src << a << '\n', tgt << b << '\n';
    if (!src.flush() || !tgt.flush()) LUONG_FAIL("toy data: write to '", base, ".src/.tgt' failed");
    written.push_back(base + ".src");
    written.push_back(base + ".tgt");
  }
  return written;
}

}  // namespace luong::nmt
