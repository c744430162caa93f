#include "models/nmt/data/text_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "framework/core/error.h"
#include "framework/io/gzip_reader.h"
#include "framework/io/read_file.h"
#include "models/nmt/data/tokenizer.h"
#include "models/nmt/data/utf8.h"

namespace luong::nmt {
namespace {

// Splits at '\n' (dropping a '\r' before it and a leading BOM); `source` prefixes every error.
std::vector<std::string> split_lines(const std::string& text, const std::string& source) {
  check_no_nul(text, source);
  check_line_ends(text, source);
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
      LUONG_FAIL(source, " line ", lines.size() + 1, ": invalid UTF-8 at byte ", bad, " of the line (byte ",
                 static_cast<int64_t>(pos) + bad, " of the file)");
    lines.push_back(std::move(line));
    pos = end + 1;
  }
  return lines;
}

}  // namespace

bool is_blank_line(const std::string& line) {
  for (char32_t c : utf8_decode(line))
    if (!is_space_char(c)) return false;
  return true;
}

std::string read_text_file(const std::string& path) {
  std::string bytes = read_whole_file(path, "file");
  if (starts_gzip(bytes)) return gunzip(bytes, "file '" + path + "'");
  return bytes;
}

std::string read_stdin_text() {
  // stdio rather than std::cin: a failed read(2) (stdin redirected from a directory gives EISDIR) must be an
  // error, and std::cin reports it as a plain end of input.
  std::string text;
  char buf[1 << 16];
  size_t n;
  errno = 0;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) text.append(buf, n);
  if (std::ferror(stdin)) LUONG_FAIL("standard input cannot be read: ", std::strerror(errno ? errno : EIO));
  if (starts_gzip(text)) return gunzip(text, "standard input");
  return text;
}

void check_line_ends(const std::string& text, const std::string& source) {
  // Classic Mac OS line ends (CR alone) would make the whole text one line: one pair "too long" in
  // training, one sentence in translate, a line-count mismatch in bleu. Said here, with the fix.
  if (text.find('\n') == std::string::npos && std::count(text.begin(), text.end(), '\r') > 1)
    LUONG_FAIL(source, " has carriage returns but no line feed: its lines end with CR alone (classic Mac OS); ",
               "convert it with tr '\\r' '\\n'");
}

void check_no_nul(const std::string& text, const std::string& source) {
  const size_t nul = text.find('\0');
  if (nul == std::string::npos) return;
  const size_t line_start = nul == 0 ? 0 : text.rfind('\n', nul - 1) + 1;  // npos + 1 == 0: the first line
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n') + 1;
  LUONG_FAIL(source, " line ", line, ": NUL byte at byte ", nul - line_start, " of the line (byte ", nul,
             " of the file)");
}

std::vector<std::string> read_lines(const std::string& path) { return lines_of_file_text(read_text_file(path), path); }

std::vector<std::string> lines_of_file_text(const std::string& text, const std::string& path) {
  return split_lines(text, str("file '", path, "'"));
}

std::vector<std::string> read_stdin_lines() { return split_lines(read_stdin_text(), "standard input"); }

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path) {
  return pair_lines(read_lines(src_path), read_lines(tgt_path), src_path, tgt_path);
}

ParallelText pair_lines(std::vector<std::string> src, std::vector<std::string> tgt, const std::string& src_path,
                        const std::string& tgt_path) {
  if (src.size() != tgt.size())
    LUONG_FAIL("parallel corpus: '", src_path, "' has ", src.size(), " lines but '", tgt_path, "' has ", tgt.size(),
               " lines (files must be line-aligned)");
  ParallelText out;
  out.lines = static_cast<int64_t>(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (is_blank_line(src[i]) || is_blank_line(tgt[i])) {
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
