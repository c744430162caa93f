#include "framework/io/gzip_reader.h"

#include <zlib.h>

#include "framework/core/error.h"

namespace luong {

bool starts_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

struct GzipInflater::Stream {
  z_stream z{};
};

GzipInflater::GzipInflater(std::string source) : z_(std::make_unique<Stream>()), source_(std::move(source)) {
  // 16 + MAX_WBITS: a gzip header and trailer (CRC-32 and length checked by zlib), not a raw zlib stream.
  if (inflateInit2(&z_->z, 16 + MAX_WBITS) != Z_OK) LUONG_FAIL(source_, ": cannot start gzip decompression");
}

GzipInflater::~GzipInflater() { inflateEnd(&z_->z); }

void GzipInflater::feed(const char* data, size_t n, std::string& out) {
  z_stream& z = z_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z.avail_in = static_cast<uInt>(n);
  char chunk[1 << 16];
  while (z.avail_in > 0) {
    if (!in_member_ && members_ > 0 && (padding_ > 0 || *z.next_in == 0)) {
      // Zero bytes after the last member: the padding of a tar block or a tape, which gunzip skips too.
      while (z.avail_in > 0 && *z.next_in == 0) ++z.next_in, --z.avail_in, ++padding_, ++compressed_in_;
      if (z.avail_in == 0) break;
      LUONG_FAIL(source_, " has other bytes after the ", padding_, " zero bytes that follow its gzip data (from byte ",
                 compressed_in_, " of the compressed input): the file is damaged, or something was appended to it");
    }
    const bool new_member = !in_member_;
    const int64_t member_start = compressed_in_;
    in_member_ = true;
    const uInt before = z.avail_in;
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
    compressed_in_ += before - z.avail_in;
    if (rc == Z_STREAM_END) {
      // The next member, if any bytes follow (what gunzip does with concatenated files).
      in_member_ = false;
      ++members_;
      if (inflateReset(&z) != Z_OK) LUONG_FAIL(source_, ": cannot restart gzip decompression");
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR && new_member && members_ > 0)
      LUONG_FAIL(source_, " has bytes after the end of its gzip data that are not gzip (from byte ", member_start,
                 " of the compressed input): the file is damaged, or something was appended to it");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      LUONG_FAIL(source_, " is not valid gzip data: ", z.msg ? z.msg : "zlib error " + std::to_string(rc),
                 " (near byte ", compressed_in_, " of the compressed input)");
    if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // needs more input than this chunk holds
  }
}

void GzipInflater::finish() const {
  if (in_member_)
    LUONG_FAIL(source_, " ends inside its gzip data after ", compressed_in_,
               " compressed bytes: the file is truncated (an interrupted download or copy?)");
}

std::string gunzip(std::string_view compressed, const std::string& source) {
  GzipInflater inflater(source);
  std::string out;
  out.reserve(compressed.size() * 3);
  // In slices: zlib's avail_in is 32-bit.
  for (size_t at = 0; at < compressed.size(); at += size_t{1} << 30)
    inflater.feed(compressed.data() + at, std::min(compressed.size() - at, size_t{1} << 30), out);
  inflater.finish();
  return out;
}

}  // namespace luong
