#include "framework/io/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "framework/core/error.h"

namespace luong {

void lock_directory(const std::string& dir, const std::string& what, const std::string& holder) {
  const std::string path = (std::filesystem::path(dir) / ".lock").string();
  // O_NOFOLLOW: a symlink planted as .lock would have its target overwritten with our pid line.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) LUONG_FAIL(what, " ", dir, ": cannot create ", path, ": ", std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char owner[256] = {};
    const ssize_t n = ::pread(fd, owner, sizeof(owner) - 1, 0);
    ::close(fd);
    std::string who = n > 0 ? std::string(owner, static_cast<size_t>(n)) : std::string();
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    LUONG_FAIL(what, " ", dir, " is in use by another ", holder, who.empty() ? "" : " (" + who + ")",
               ": wait for it to finish or stop it, or choose another ", what);
  }
  // The file records the holder for that message; the lock itself is the open descriptor.
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const std::string owner = str("pid ", ::getpid(), " on ", host, "\n");
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t w = ::pwrite(fd, owner.data(), owner.size(), 0);
  }
  // fd stays open on purpose: closing it would release the lock.
}

}  // namespace luong
