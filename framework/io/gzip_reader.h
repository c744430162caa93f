// Reading gzip-compressed text (WMT-sized corpora usually come as .gz): a file or a stream whose first two
// bytes are gzip's magic number is decompressed as it is read, whatever its name, so `data.train_src:
// train.de.gz`, `luong eval --ref ref.gz` and `luong translate < input.gz` work as on plain text. Files of
// several members (`cat a.gz b.gz`) read as gunzip reads them: one text after the other; zero bytes after the last
// member (tar's block padding) are skipped as gunzip skips them, and any other bytes there are an error naming
// where they start (gunzip warns and ignores them: luong will not train on a file it cannot vouch for).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace luong {

// Whether `bytes` begin with gzip's magic number (1f 8b). No text line starts with 1f (a control character).
bool starts_gzip(std::string_view bytes);

// Incremental decompression: compressed bytes in, text out, any chunking.
class GzipInflater {
 public:
  // `source` names the input in errors: "file 'train.de.gz' is not valid gzip data: ...".
  explicit GzipInflater(std::string source);
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  // Decompresses `n` bytes and appends the text they complete to `out`.
  void feed(const char* data, size_t n, std::string& out);
  // At the end of the input: an error if it ended inside a member (a truncated file).
  void finish() const;

 private:
  struct Stream;
  std::unique_ptr<Stream> z_;
  std::string source_;
  bool in_member_ = false;     // a member started and its end not yet read
  int64_t members_ = 0;        // members read to their end
  int64_t padding_ = 0;        // zero bytes skipped after the last member
  int64_t compressed_in_ = 0;  // bytes fed so far (for error positions)
};

// All of `compressed` decompressed (read_text_file's .gz files).
std::string gunzip(std::string_view compressed, const std::string& source);

}  // namespace luong
