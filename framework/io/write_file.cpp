#include "framework/io/write_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "framework/core/error.h"
#include "framework/core/unique_fd.h"

namespace luong {
namespace {

std::string directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

void check_output_path(const std::string& path, const std::string& what) {
  if (path.empty()) LUONG_FAIL(what, " path is empty");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) LUONG_FAIL(what, " '", path, "' cannot be written: it is a directory");
  const std::string dir = directory_of(path);
  if (!std::filesystem::is_directory(dir, ec))
    LUONG_FAIL(what, " '", path, "' cannot be written: its directory ", dir, " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    LUONG_FAIL(what, " '", path, "' cannot be written: ", dir, ": ", std::strerror(errno));
}

void write_file_atomically(const std::string& path, const std::string& text, const std::string& what) {
  check_output_path(path, what);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const auto fail = [&](const char* step) {
    const int err = errno;
    ::unlink(tmp.c_str());
    LUONG_FAIL(what, " '", path, "' cannot be written: ", step, ": ", std::strerror(err));
  };
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.fd < 0) fail("open");
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd.fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("write");
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.fd) != 0) fail("fsync");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace luong
