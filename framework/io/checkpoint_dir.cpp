#include "framework/io/checkpoint_dir.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace luong {
namespace {

namespace fs = std::filesystem;

std::optional<int64_t> parse_step(const std::string& filename) {
  const std::string prefix = "ckpt-", suffix = ".h5";
  if (filename.size() <= prefix.size() + suffix.size() || filename.compare(0, prefix.size(), prefix) != 0 ||
      filename.compare(filename.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const char* begin = filename.data() + prefix.size();
  const char* end = filename.data() + filename.size() - suffix.size();
  if (!std::all_of(begin, end, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int64_t step = 0;
  auto [ptr, ec] = std::from_chars(begin, end, step);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return step;
}

}  // namespace

std::string checkpoint_path(const std::string& run_dir, int64_t step) {
  return (fs::path(run_dir) / ("ckpt-" + std::to_string(step) + ".h5")).string();
}

std::vector<CheckpointFile> list_checkpoints(const std::string& run_dir) {
  std::vector<CheckpointFile> out;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(run_dir)) {
    if (!entry.is_regular_file()) continue;
    if (auto step = parse_step(entry.path().filename().string())) out.push_back({*step, entry.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const CheckpointFile& a, const CheckpointFile& b) { return a.step < b.step; });
  return out;
}

LatestCheckpoint find_latest_valid(const std::string& run_dir,
                                   const std::function<std::string(const Checkpoint&)>& unusable) {
  LatestCheckpoint result;
  const auto files = list_checkpoints(run_dir);
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    try {
      Checkpoint c = load_checkpoint(it->path);
      if (const std::string why = unusable ? unusable(c) : std::string(); !why.empty()) {
        result.skipped.push_back({it->path, str("checkpoint ", it->path, ": ", why)});
        continue;
      }
      result.checkpoint = std::move(c);
      result.file = *it;
      return result;
    } catch (const Error& e) {
      result.skipped.push_back({it->path, e.what()});
    }
  }
  return result;
}

std::string best_checkpoint_path(const std::string& run_dir) { return (fs::path(run_dir) / "best.h5").string(); }

bool holds_checkpoints(const std::string& run_dir) {
  std::error_code ec;
  return !list_checkpoints(run_dir).empty() || fs::exists(best_checkpoint_path(run_dir), ec);
}

std::vector<std::string> remove_stale_temp_files(const std::string& run_dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return removed;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t at = name.rfind(".tmp.");
    if (at == std::string::npos || !entry.is_regular_file(ec)) continue;
    const std::string pid_text = name.substr(at + 5);
    pid_t pid = 0;
    auto [ptr, err] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
    if (err != std::errc() || ptr != pid_text.data() + pid_text.size() || pid <= 0) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // its writer may still be running
    if (fs::remove(entry.path(), ec)) removed.push_back(entry.path().string());
  }
  return removed;
}

void mark_best(const std::string& run_dir, int64_t step) {
  const std::string src = checkpoint_path(run_dir, step);
  const std::string best = best_checkpoint_path(run_dir);
  const std::string tmp = best + ".tmp." + std::to_string(::getpid());
  if (!fs::is_regular_file(src)) LUONG_FAIL("mark_best: checkpoint ", src, " does not exist");
  std::remove(tmp.c_str());
  // A hard link costs no space and survives the deletion of ckpt-<step>.h5; copy where links are refused.
  if (::link(src.c_str(), tmp.c_str()) != 0) {
    std::error_code ec;
    fs::copy_file(src, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) LUONG_FAIL("mark_best: cannot link or copy ", src, " to ", tmp, ": ", ec.message());
  }
  if (std::rename(tmp.c_str(), best.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    LUONG_FAIL("mark_best: cannot rename ", tmp, " to ", best, ": ", std::strerror(err));
  }
}

std::vector<std::string> apply_retention(const std::string& run_dir, int64_t keep_last) {
  LUONG_CHECK(keep_last >= 1, "apply_retention: keep_last must be at least 1, got ", keep_last);
  const auto files = list_checkpoints(run_dir);
  std::vector<std::string> deleted;
  const int64_t n_delete = static_cast<int64_t>(files.size()) - keep_last;
  for (int64_t i = 0; i < n_delete; ++i) {
    const std::string& p = files[static_cast<size_t>(i)].path;
    std::error_code ec;
    if (!fs::remove(p, ec) && ec) LUONG_FAIL("apply_retention: cannot delete ", p, ": ", ec.message());
    deleted.push_back(p);
  }
  return deleted;
}

}  // namespace luong
