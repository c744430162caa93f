#include "framework/io/checkpoint_seal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "framework/core/error.h"
#include "framework/core/unique_fd.h"
#include "framework/io/config_value.h"

namespace luong {
namespace {

// The first line of a seal; the second is "bytes <N> crc32 <8 hex digits>", then NUL padding to 512 bytes.
constexpr std::string_view kMagic = "luong checkpoint seal 1\n";
constexpr std::string_view kHdf5Signature = "\x89HDF\r\n\x1a\n";

// CRC-32 (zlib's, the one Python's zlib.crc32 computes) and length of the bytes from offset 512 to the end.
void crc_after_seal(int fd, const std::string& path, uint64_t& length, uint32_t& crc) {
  length = 0;
  uLong c = crc32(0L, Z_NULL, 0);
  static thread_local char buf[1 << 20];
  for (off_t at = kCheckpointSealBytes;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) LUONG_FAIL("checkpoint ", path, ": cannot read it: ", std::strerror(errno));
    if (n == 0) break;
    c = crc32(c, reinterpret_cast<const Bytef*>(buf), static_cast<uInt>(n));
    length += static_cast<uint64_t>(n);
    at += n;
  }
  crc = static_cast<uint32_t>(c);
}

std::string seal_text(uint64_t length, uint32_t crc) {
  char line[64];
  std::snprintf(line, sizeof line, "bytes %" PRIu64 " crc32 %08" PRIx32 "\n", length, crc);
  std::string s = std::string(kMagic) + line;
  s.resize(kCheckpointSealBytes, '\0');
  return s;
}

}  // namespace

void seal_checkpoint_file(const std::string& path) {
  const UniqueFd f{::open(path.c_str(), O_RDWR | O_CLOEXEC)};
  if (f.fd < 0) LUONG_FAIL("checkpoint ", path, ": cannot open it to seal: ", std::strerror(errno));
  char head[kCheckpointSealBytes + 8];
  if (::pread(f.fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head) ||
      std::string_view(head + kCheckpointSealBytes, 8) != kHdf5Signature)
    LUONG_FAIL("checkpoint ", path, ": no 512-byte user block to seal (the HDF5 data does not start at byte 512)");
  uint64_t length = 0;
  uint32_t crc = 0;
  crc_after_seal(f.fd, path, length, crc);
  const std::string seal = seal_text(length, crc);
  if (::pwrite(f.fd, seal.data(), seal.size(), 0) != static_cast<ssize_t>(seal.size()))
    LUONG_FAIL("checkpoint ", path, ": cannot write its seal: ", std::strerror(errno));
}

void check_checkpoint_seal(const std::string& path) {
  const UniqueFd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return;  // the reader says why it cannot be opened
  char head[kCheckpointSealBytes + 8];
  const ssize_t got = ::pread(f.fd, head, sizeof head, 0);
  if (got != static_cast<ssize_t>(sizeof head)) return;  // too short for a seal: the reader reports what it is
  const bool has_user_block = std::string_view(head + kCheckpointSealBytes, 8) == kHdf5Signature;
  const bool has_magic = std::string_view(head, kMagic.size()) == kMagic;
  if (!has_user_block && !has_magic) return;  // no seal: HDF5 data from byte 0 (older luong, another tool)
  const std::string_view stored(head, kCheckpointSealBytes);
  const size_t line_end = stored.find('\n', kMagic.size());
  const std::string said = has_magic && line_end != std::string_view::npos
                               ? printable_excerpt(std::string(stored.substr(kMagic.size(), line_end - kMagic.size())))
                               : std::string("a damaged seal");
  const auto mismatch = [&](const std::string& found) {
    LUONG_FAIL("checkpoint ", path, ": checksum mismatch over the file's bytes (the seal says '", said,
               "', the file has '", found,
               "'): the file was changed or damaged after luong wrote it; an older checkpoint may be intact");
  };
  // The stated length first: a file of another size is refused without reading it (a 4 GiB one took 21 s).
  struct stat st {};
  uint64_t stated = 0;
  if (::fstat(f.fd, &st) == 0 && std::sscanf(said.c_str(), "bytes %" SCNu64, &stated) == 1 &&
      stated != static_cast<uint64_t>(st.st_size) - kCheckpointSealBytes)
    mismatch(str("bytes ", static_cast<uint64_t>(st.st_size) - kCheckpointSealBytes));
  uint64_t length = 0;
  uint32_t crc = 0;
  crc_after_seal(f.fd, path, length, crc);
  const std::string expected = seal_text(length, crc);
  if (stored == expected) return;
  mismatch(expected.substr(kMagic.size(), expected.find('\n', kMagic.size()) - kMagic.size()));
}

}  // namespace luong
