// A file descriptor closed on every way out of its scope, errors included.
#pragma once
#include <unistd.h>

namespace luong {

struct UniqueFd {
  int fd;
  explicit UniqueFd(int f) : fd(f) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace luong
