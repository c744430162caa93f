#include "models/nmt/data/line_stream.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "framework/core/error.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/data/utf8.h"

namespace luong::nmt {

LineStream::LineStream(int fd, std::string source, std::string unit)
    : fd_(fd), source_(std::move(source)), unit_(std::move(unit)) {}

void LineStream::take(const char* data, size_t n) {
  if (!sniffed_) {
    first_bytes_.append(data, n);
    // One byte of 0x1f may be half of gzip's magic number: wait for the second (text never starts with it).
    if (first_bytes_.size() < 2 && first_bytes_ == "\x1f") return;
    sniffed_ = true;
    if (starts_gzip(first_bytes_)) {
      gzip_ = std::make_unique<GzipInflater>(source_);
      unit_ = "decompressed " + unit_;
    }
    const std::string first = std::move(first_bytes_);
    first_bytes_.clear();
    take(first.data(), first.size());
    return;
  }
  if (gzip_) {
    gzip_->feed(data, n, buffer_);
  } else {
    buffer_.append(data, n);
  }
}

bool LineStream::fill() {
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      take(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) {
      if (!sniffed_) buffer_.append(first_bytes_), sniffed_ = true;  // a lone 0x1f: text after all
      if (gzip_) gzip_->finish();
      return false;
    }
    if (errno != EINTR) LUONG_FAIL(source_, " cannot be read: ", std::strerror(errno));
  }
}

std::optional<std::string> LineStream::next() {
  size_t end = buffer_.find('\n', pos_);
  while (end == std::string::npos && !ended_) {
    // Keep only the unfinished line before reading more, so the buffer stays about one line long.
    buffer_offset_ += static_cast<int64_t>(pos_);
    buffer_.erase(0, pos_);
    pos_ = 0;
    if (!fill()) ended_ = true;
    end = buffer_.find('\n', pos_);
  }
  if (end == std::string::npos) {
    if (pos_ == buffer_.size()) return std::nullopt;
    end = buffer_.size();                                             // the last line has no '\n'
    if (lines_ == 0) check_line_ends(buffer_.substr(pos_), source_);  // the whole input is one "line"
  }
  const size_t start = pos_;
  pos_ = std::min(end + 1, buffer_.size());
  size_t stop = end;
  if (stop > start && buffer_[stop - 1] == '\r') --stop;
  std::string line = buffer_.substr(start, stop - start);
  ++lines_;
  int64_t line_offset = buffer_offset_ + static_cast<int64_t>(start);
  if (lines_ == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3), line_offset += 3;
  if (const size_t nul = line.find('\0'); nul != std::string::npos)
    LUONG_FAIL(source_, " line ", lines_, ": NUL byte at byte ", nul, " of the line (byte ",
               line_offset + static_cast<int64_t>(nul), " of the ", unit_, ")");
  if (const int64_t bad = utf8_invalid_offset(line); bad >= 0)
    LUONG_FAIL(source_, " line ", lines_, ": invalid UTF-8 at byte ", bad, " of the line (byte ", line_offset + bad,
               " of the ", unit_, ")");
  return line;
}

bool LineStream::ready() {
  // Reads whatever is waiting, without blocking (poll says a read will not wait), until a whole line is
  // in or nothing more is waiting: bytes of a line still being written are not a line.
  for (;;) {
    if (ended_ || buffer_.find('\n', pos_) != std::string::npos) return true;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (!fill()) ended_ = true;  // readable or hung up: this read returns at once
  }
}

}  // namespace luong::nmt
