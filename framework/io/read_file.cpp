#include "framework/io/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "framework/core/error.h"
#include "framework/core/unique_fd.h"

namespace luong {

int open_file_for_reading(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) LUONG_FAIL(what, " '", path, "' cannot be read: it is a directory");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) LUONG_FAIL(what, " '", path, "' cannot be read: ", std::strerror(errno));
  return fd;
}

std::string read_whole_file(const std::string& path, const std::string& what, size_t max_bytes) {
  const UniqueFd f{open_file_for_reading(path, what)};
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      LUONG_FAIL(what, " '", path, "' cannot be read: ", std::strerror(errno), " (after ", text.size(), " bytes)");
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > max_bytes)
      LUONG_FAIL(what, " '", path, "' is larger than ", max_bytes >> 20, " MiB; expected a small text file");
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace luong
