// Reading text corpora: plain UTF-8 files, one sentence per line (LF or CRLF; a leading BOM is dropped).
// Every error names the file, and the line and byte offset where that applies.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace luong::nmt {

// All lines of a file (a last line without '\n' counts). Throws when the file cannot be read or a line is
// not valid UTF-8 ("file 'x' line 7: invalid UTF-8 at byte 12 of the line (byte 340 of the file)") or holds a
// NUL byte ("file 'x' line 7: NUL byte at byte 3 of the line (byte 331 of the file)").
std::vector<std::string> read_lines(const std::string& path);
// The same for standard input; errors say "standard input line 7: ..." (and name the read error).
std::vector<std::string> read_stdin_lines();
// The lines of `text` already read from `path`, with read_lines' checks and messages.
std::vector<std::string> lines_of_file_text(const std::string& text, const std::string& path);

// The whole file as bytes, decompressed when it is gzip data (framework/io/gzip_reader.h); errors name the file
// (missing, a directory, unreadable, damaged or truncated gzip data).
std::string read_text_file(const std::string& path);
// All of standard input as bytes (decompressed when gzip); a read error (stdin is a directory, EIO) is an
// error, not an empty input.
std::string read_stdin_text();
// Throws "<source> line N: NUL byte at byte M of the line (byte K of the file)" for the first NUL in `text`
// (`source` is e.g. "file 'x'" or "standard input"). A NUL is never text: tokenizers and BLEU would count it
// as a character and checkpoints cannot store it in a vocabulary.
void check_no_nul(const std::string& text, const std::string& source);
// Throws "<source> has carriage returns but no line feed: ..." (with the tr command that converts it) for
// text whose lines end with CR alone, which would otherwise read as one long line.
void check_line_ends(const std::string& text, const std::string& source);

// Whether a line is empty or only whitespace (such a pair is skipped from a parallel corpus).
bool is_blank_line(const std::string& line);

// Two line-aligned files. Pairs where either side is empty (or only whitespace) are skipped and counted.
struct ParallelText {
  std::vector<std::string> src, tgt;
  std::vector<int64_t> line_numbers;  // 1-based line of each kept pair in the files
  int64_t lines = 0;                  // lines per file
  int64_t empty_skipped = 0;
};
// Throws when either file is unreadable or the line counts differ (naming both files and counts).
ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path);
// The same for lines already read (a pipe cannot be read twice); the paths name them in errors.
ParallelText pair_lines(std::vector<std::string> src, std::vector<std::string> tgt, const std::string& src_path,
                        const std::string& tgt_path);

}  // namespace luong::nmt
