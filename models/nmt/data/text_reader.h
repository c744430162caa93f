// Reading text corpora: plain UTF-8 files, one sentence per line (LF or CRLF; a leading BOM is dropped).
// Every error names the file, and the line and byte offset where that applies.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace luong::nmt {

// All lines of a file (a last line without '\n' counts). Throws when the file cannot be read or a line is
// not valid UTF-8 ("file 'x' line 7: invalid UTF-8 at byte 12 of the line (byte 340 of the file)").
std::vector<std::string> read_lines(const std::string& path);

// Two line-aligned files. Pairs where either side is empty (or only whitespace) are skipped and counted.
struct ParallelText {
  std::vector<std::string> src, tgt;
  std::vector<int64_t> line_numbers;  // 1-based line of each kept pair in the files
  int64_t lines = 0;                  // lines per file
  int64_t empty_skipped = 0;
};
// Throws when either file is unreadable or the line counts differ (naming both files and counts).
ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path);

}  // namespace luong::nmt
