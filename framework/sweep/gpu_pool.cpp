#include "framework/sweep/gpu_pool.h"

#include <algorithm>
#include <set>

#include "framework/core/error.h"
#include "framework/io/config_value.h"

namespace luong::sweep {

GpuPool::GpuPool(std::vector<std::string> ids) : ids_(std::move(ids)), taken_(ids_.size(), false) {}

size_t GpuPool::free() const { return static_cast<size_t>(std::count(taken_.begin(), taken_.end(), false)); }

std::optional<std::vector<std::string>> GpuPool::take(size_t n) {
  if (free() < n) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < ids_.size() && out.size() < n; ++i)
    if (!taken_[i]) taken_[i] = true, out.push_back(ids_[i]);
  return out;
}

void GpuPool::give_back(const std::vector<std::string>& ids) {
  for (const std::string& id : ids)
    for (size_t i = 0; i < ids_.size(); ++i)
      if (ids_[i] == id) taken_[i] = false;
}

std::string visible_devices(const std::vector<std::string>& ids) {
  std::string s;
  for (const std::string& id : ids) s += (s.empty() ? "" : ",") + id;
  return s;
}

void check_gpu_ids(const std::vector<std::string>& ids, const std::string& what) {
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    if (id.empty()) LUONG_FAIL(what, ": an empty GPU id (expected ids such as 0,1,2 or GPU-UUIDs)");
    if (id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != std::string::npos)
      LUONG_FAIL(what, ": '", printable(id), "' is not a GPU id (an index such as 0, or a GPU-UUID)");
    if (!seen.insert(id).second) LUONG_FAIL(what, ": GPU ", id, " is listed twice");
  }
}

std::vector<std::string> parse_gpu_list(const std::string& text, const std::string& what) {
  std::vector<std::string> ids;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string id = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t b = id.find_first_not_of(' '), e = id.find_last_not_of(' ');
    ids.push_back(b == std::string::npos ? std::string() : id.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  check_gpu_ids(ids, what);
  return ids;
}

}  // namespace luong::sweep
