#include "models/nmt/data/text_reader.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/core/error.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/utf8.h"

namespace luong::nmt {
namespace {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) LUONG_FAIL("file '", path, "' cannot be read: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) LUONG_FAIL("file '", path, "' cannot be read: ", std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) LUONG_FAIL("file '", path, "': read error");
  return buf.str();
}

bool blank(const std::string& s) {
  for (char32_t c : utf8_decode(s))
    if (!is_space_char(c)) return false;
  return true;
}

}  // namespace

std::vector<std::string> read_lines(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<std::string> lines;
  size_t pos = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    size_t stop = end;
    if (stop > pos && text[stop - 1] == '\r') --stop;
    std::string line = text.substr(pos, stop - pos);
    const int64_t bad = utf8_invalid_offset(line);
    if (bad >= 0)
      LUONG_FAIL("file '", path, "' line ", lines.size() + 1, ": invalid UTF-8 at byte ", bad, " of the line (byte ",
                 static_cast<int64_t>(pos) + bad, " of the file)");
    lines.push_back(std::move(line));
    pos = end + 1;
  }
  return lines;
}

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path) {
  std::vector<std::string> src = read_lines(src_path);
  std::vector<std::string> tgt = read_lines(tgt_path);
  if (src.size() != tgt.size())
    LUONG_FAIL("parallel corpus: '", src_path, "' has ", src.size(), " lines but '", tgt_path, "' has ", tgt.size(),
               " lines (files must be line-aligned)");
  ParallelText out;
  out.lines = static_cast<int64_t>(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (blank(src[i]) || blank(tgt[i])) {
      ++out.empty_skipped;
      continue;
    }
    out.src.push_back(std::move(src[i]));
    out.tgt.push_back(std::move(tgt[i]));
    out.line_numbers.push_back(static_cast<int64_t>(i) + 1);
  }
  return out;
}

}  // namespace luong::nmt
