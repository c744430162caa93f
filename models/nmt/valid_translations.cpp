#include "models/nmt/valid_translations.h"

#include <filesystem>

#include "framework/core/error.h"
#include "framework/dist/process_group.h"
#include "framework/io/write_file.h"
#include "models/nmt/data/text_reader.h"

namespace luong::nmt {
namespace {

constexpr const char* kWhat = "train.valid_translations";

std::string lines_text(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text.append(line).append("\n");
  return text;
}

}  // namespace

std::string valid_translations_path(const std::string& dir, int64_t step) { return str(dir, "/step-", step, ".txt"); }

void write_valid_translations(ProcessGroup& group, const std::string& dir, int64_t step,
                              const std::vector<std::string>& share, size_t lines) {
  const size_t world = static_cast<size_t>(group.size()), rank = static_cast<size_t>(group.rank());
  LUONG_CHECK(share.size() == (lines + world - 1 - rank) / world, "write_valid_translations: rank ", rank, " holds ",
              share.size(), " of ", lines, " lines");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) LUONG_FAIL(kWhat, ": cannot create ", dir, ": ", ec.message());
  const std::string path = valid_translations_path(dir, step);
  if (world == 1) return write_file_atomically(path, lines_text(share), kWhat);
  const auto part_path = [&](size_t r) { return str(path, ".part", r); };
  write_file_atomically(part_path(rank), lines_text(share), kWhat);
  group.barrier();  // every share is on disk
  if (rank != 0) return;
  std::vector<std::vector<std::string>> parts(world);
  for (size_t r = 0; r < world; ++r) parts[r] = lines_of_file_text(read_text_file(part_path(r)), part_path(r));
  std::vector<std::string> all(lines);
  for (size_t i = 0; i < lines; ++i) {
    const std::vector<std::string>& part = parts[i % world];
    LUONG_CHECK(i / world < part.size(), kWhat, ": ", part_path(i % world), " holds ", part.size(),
                " lines, fewer "
                "than its share of ",
                lines);
    all[i] = part[i / world];
  }
  write_file_atomically(path, lines_text(all), kWhat);
  for (size_t r = 0; r < world; ++r) std::filesystem::remove(part_path(r), ec);
}

}  // namespace luong::nmt
