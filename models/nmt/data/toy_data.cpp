#include "models/nmt/data/toy_data.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
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

void check_toy_options(const ToyDataOptions& o) {
  if (o.min_len < 1 || o.max_len < o.min_len || o.max_len > kMaxToyLength)
    LUONG_FAIL("toy data: sentence lengths need 1 <= min_len <= max_len <= ", kMaxToyLength, ", got min_len ",
               o.min_len, ", max_len ", o.max_len);
  for (const int64_t n : {o.train, o.valid, o.test})
    if (n < 0 || n > kMaxToyPairs) LUONG_FAIL("toy data: a split needs 0 to ", kMaxToyPairs, " pairs, got ", n);
}

namespace {

// Calls `emit(src, tgt)` for each of the `count` pairs of split `split`.
template <class Emit>
void for_each_toy_pair(const ToyDataOptions& o, int split, int64_t count, Emit&& emit) {
  check_toy_options(o);
  // Each split draws from its own counter range, so changing one split's size leaves the others unchanged.
  Generator g(o.seed, static_cast<uint64_t>(split) << 40);
  std::vector<int> words;
  for (int64_t k = 0; k < count; ++k) {
    const auto len = o.min_len + static_cast<int64_t>(g.below(static_cast<uint64_t>(o.max_len - o.min_len + 1)));
    words.assign(static_cast<size_t>(len), 0);
    for (int& w : words) w = static_cast<int>(g.below(16));
    std::string src, tgt;
    for (size_t i = 0; i < words.size(); ++i) {
      if (i > 0) src += ' ', tgt += ' ';
      src += kSrcWords[words[i]];
      tgt += kTgtWords[translate_word(words[words.size() - 1 - i])];
    }
    emit(src + " .", tgt + " .");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> toy_pairs(const ToyDataOptions& o, int split, int64_t count) {
  LUONG_CHECK(count >= 0 && count <= kMaxToyPairs, "toy data: a split needs 0 to ", kMaxToyPairs, " pairs, got ",
              count);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(static_cast<size_t>(count));
  for_each_toy_pair(o, split, count,
                    [&](std::string src, std::string tgt) { out.emplace_back(std::move(src), std::move(tgt)); });
  return out;
}

std::vector<std::string> write_toy_data(const std::string& dir, const ToyDataOptions& o) {
  check_toy_options(o);  // before any directory or file is made
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) LUONG_FAIL("toy data: cannot create directory '", dir, "': ", ec.message());
  const std::pair<const char*, int64_t> splits[3] = {{"train", o.train}, {"valid", o.valid}, {"test", o.test}};
  // Every file is written under a temporary name and the six are renamed only once all are complete: a
  // failure (a directory where a file goes, a read-only file, a full disk) leaves no partial corpus behind,
  // and the message names the file and the reason.
  std::vector<std::string> written, temps;
  const auto fail = [&](const std::string& path, int err) {
    for (const auto& t : temps) std::filesystem::remove(t, ec);
    LUONG_FAIL("toy data: cannot write '", path, "': ", std::strerror(err));
  };
  const auto open = [&](std::ofstream& f, const std::string& path) {
    std::filesystem::remove(path + ".tmp", ec);  // a symlink planted there would be written through
    errno = 0;
    f.open(path + ".tmp", std::ios::binary | std::ios::trunc);
    if (!f) fail(path + ".tmp", errno ? errno : EIO);
    temps.push_back(path + ".tmp");
  };
  for (int s = 0; s < 3; ++s) {
    const std::string base = (std::filesystem::path(dir) / splits[s].first).string();
    std::ofstream src, tgt;
    open(src, base + ".src");
    open(tgt, base + ".tgt");
    for_each_toy_pair(o, s, splits[s].second,
                      [&](const std::string& a, const std::string& b) { src << a << '\n', tgt << b << '\n'; });
    errno = 0;
    if (!src.flush()) fail(base + ".src", errno ? errno : EIO);
    if (!tgt.flush()) fail(base + ".tgt", errno ? errno : EIO);
    written.push_back(base + ".src");
    written.push_back(base + ".tgt");
  }
  // Checked for all six before the first rename, so that a directory in the way of the last one does not
  // leave the first ones renamed.
  for (const auto& path : written)
    if (std::filesystem::is_directory(path, ec)) fail(path, EISDIR);
  for (size_t i = 0; i < written.size(); ++i)
    if (std::rename(temps[i].c_str(), written[i].c_str()) != 0) fail(written[i], errno);
  return written;
}

}  // namespace luong::nmt
