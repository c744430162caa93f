#include "framework/dist/node_shared_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <random>

#include "framework/core/error.h"

namespace luong {
namespace {

std::string megabytes(size_t bytes) { return str(static_cast<double>(bytes) / 1e6, " MB"); }

// A name no other job or call uses: a number rank 0 drew (the same on every rank) and the call's index in this
// process (the same on every rank, since the calls are collective).
std::string block_name(ProcessGroup& group) {
  static uint64_t calls = 0;
  uint64_t drawn = 0;
  if (group.rank() == 0) drawn = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  const uint64_t job = group.all_gather(drawn).at(0);
  char name[64];
  std::snprintf(name, sizeof name, "/luong-%016llx-%llu", static_cast<unsigned long long>(job),
                static_cast<unsigned long long>(calls++));
  return name;
}

std::shared_ptr<const std::byte> as_shared(void* p, size_t bytes) {
  return {static_cast<const std::byte*>(p), [bytes](const std::byte* q) { munmap(const_cast<std::byte*>(q), bytes); }};
}

// The node's first process: the block, filled and read-only, or null with why_not. Its name is removed again on
// failure, so that no other process maps a block that was never filled.
std::shared_ptr<const std::byte> create_block(const std::string& name, size_t bytes,
                                              const std::function<void(std::byte*)>& fill, std::string& why_not) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    why_not = str("cannot create /dev/shm", name, ": ", std::strerror(errno));
    return nullptr;
  }
  // Reserved up front: a tmpfs without room would otherwise accept the size and kill the process with SIGBUS
  // at the first page it cannot back.
  const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  void* p = err == 0 ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  const int map_errno = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    why_not = err != 0 ? str("no room for ", megabytes(bytes), " in /dev/shm (", std::strerror(err), ")")
                       : str("cannot map /dev/shm", name, ": ", std::strerror(map_errno));
    return nullptr;
  }
  fill(static_cast<std::byte*>(p));
  mprotect(p, bytes, PROT_READ);
  return as_shared(p, bytes);
}

// Any other process of the node: the block its first process made, read-only.
std::shared_ptr<const std::byte> map_block(const std::string& name, size_t bytes, std::string& why_not) {
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) {
    why_not = errno == ENOENT
                  ? str("the first process of this node did not create /dev/shm", name, " (its own warning says why)")
                  : str("cannot open /dev/shm", name, ": ", std::strerror(errno));
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    why_not = str("/dev/shm", name, " holds ", st.st_size, " bytes, not this process's ", bytes);
    close(fd);
    return nullptr;
  }
  void* p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (p == MAP_FAILED) {
    why_not = str("cannot map /dev/shm", name, ": ", std::strerror(map_errno));
    return nullptr;
  }
  return as_shared(p, bytes);
}

}  // namespace

std::vector<std::string> remove_stale_blocks(std::chrono::seconds older_than) {
  std::vector<std::string> removed;
  DIR* dir = opendir("/dev/shm");
  if (!dir) return removed;  // no POSIX shared memory here: nothing was left either
  const time_t now = std::time(nullptr);
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind("luong-", 0) != 0) continue;
    const std::string path = "/dev/shm/" + name;
    struct stat st {};
    // Another user's block is theirs to remove (and /dev/shm's sticky bit would refuse it anyway).
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
    if (now - st.st_mtime <= older_than.count()) continue;
    if (shm_unlink(("/" + name).c_str()) == 0) removed.push_back(path);
  }
  closedir(dir);
  std::sort(removed.begin(), removed.end());
  return removed;
}

NodeSharedBytes share_on_node(ProcessGroup& group, size_t bytes, const std::function<void(std::byte*)>& fill,
                              std::string& why_not) {
  why_not.clear();
  // The same collectives on every rank, whatever each one decides (nodes may hold different numbers of ranks).
  const std::string name = block_name(group);
  const bool alone = group.local_size() <= 1, first = group.local_rank() == 0;
  std::shared_ptr<const std::byte> data;
  if (alone)
    why_not = "one process on this node";
  else if (bytes == 0)
    why_not = "nothing to share";
  else if (first) {
    const auto timeout = std::chrono::duration_cast<std::chrono::seconds>(group.timeout());
    for (const std::string& path :
         remove_stale_blocks(std::max<std::chrono::seconds>(std::chrono::hours(1), 2 * timeout)))
      std::cerr << "luong: rank " << group.rank() << ": removed " << path
                << " (left in shared memory by a job killed while it shared data)\n";
    data = create_block(name, bytes, fill, why_not);
  }
  group.barrier();  // the block is filled (or its name gone)
  if (!alone && bytes > 0 && !first) data = map_block(name, bytes, why_not);
  group.barrier();  // every process that could map it has
  if (first && data) shm_unlink(name.c_str());
  if (!data) return {};
  return {std::move(data), bytes};
}

}  // namespace luong
