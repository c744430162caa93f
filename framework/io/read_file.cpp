#include "framework/io/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "framework/core/error.h"
#include "framework/core/unique_fd.h"

namespace luong {

std::string read_whole_file(const std::string& path, const std::string& what, size_t max_bytes) {
  const UniqueFd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) LUONG_FAIL(what, " '", path, "' cannot be read: ", std::strerror(errno));
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
