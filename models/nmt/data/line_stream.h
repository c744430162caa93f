// Lines read from a file descriptor as they arrive (stdin of `luong translate`), so a translation can be
// printed as soon as its line is in: `luong translate` works as an interactive or streaming filter rather
// than waiting for the end of its input. The same checks as text_reader.h, naming the line: invalid UTF-8,
// NUL bytes, read errors; '\n' or "\r\n" ends a line and a BOM at the very start is dropped. Input that starts
// with gzip's magic number is decompressed as it arrives (framework/io/gzip_reader.h); byte offsets in errors
// then count the decompressed text.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "framework/io/gzip_reader.h"

namespace luong::nmt {

class LineStream {
 public:
  // `source` names the input in errors ("standard input", "file 'x'"); `unit` is what byte offsets count in
  // ("... (byte 340 of the input)").
  LineStream(int fd, std::string source, std::string unit = "input");

  // The next line, or nullopt at the end of the input (a last line without '\n' counts). Blocks until a
  // whole line has arrived.
  std::optional<std::string> next();

  // True when next() returns without waiting for input: a whole line has arrived (reading what is waiting,
  // without blocking) or the input has ended. False means the writer has paused, possibly in the middle of
  // a line (a person typing, a slow pipe, `tail -f` of a file being written).
  bool ready();

 private:
  bool fill();  // one read(2) into the buffer; false at the end of the input
  // Bytes read go to the buffer, through the decompressor once the first ones say gzip.
  void take(const char* data, size_t n);

  int fd_;
  std::string source_, unit_;
  std::string buffer_;  // bytes read and not yet returned start at pos_
  size_t pos_ = 0;
  int64_t buffer_offset_ = 0;  // byte offset of buffer_[0] in the input
  int64_t lines_ = 0;          // lines returned so far
  bool ended_ = false;
  std::string first_bytes_;  // read before it is known whether the input is gzip (at most 1 byte, 0x1f)
  bool sniffed_ = false;
  std::unique_ptr<GzipInflater> gzip_;
};

}  // namespace luong::nmt
