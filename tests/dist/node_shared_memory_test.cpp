// One copy of some bytes for the processes of a node (framework/dist/node_shared_memory.h), and the training
// pairs kept that way (ExampleList::share_on_node). Run as one process, where nothing is shared, and under
// mpirun -np 2 on one machine, where both ranks read the block rank 0 filled (dist_support.h).
#include "framework/dist/node_shared_memory.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "models/nmt/data/example_list.h"
#include "tests/dist/dist_support.h"

namespace luong::testing {
namespace {

// The line of /proc/self/maps that maps address p ("" when none does).
std::string mapping_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    in >> std::hex >> lo >> dash >> hi;
    if (address >= lo && address < hi) return line;
  }
  return "";
}

// Four bytes of pattern for offset i, so that a block of another fill, or a shifted one, is seen.
uint32_t pattern(size_t i) { return static_cast<uint32_t>(i * 2654435761u + 7); }

TEST(NodeSharedMemory, EveryProcessOfTheNodeReadsTheBlockItsFirstProcessFilled) {
  auto group = make_test_group();
  constexpr size_t kWords = 300000;  // 1.2 MB, more than one page, not a multiple of one
  const size_t bytes = sizeof(pid_t) + kWords * sizeof(uint32_t);
  int fills = 0;
  std::string why_not;
  const NodeSharedBytes block = share_on_node(
      *group, bytes,
      [&](std::byte* p) {
        ++fills;
        const pid_t me = getpid();
        std::memcpy(p, &me, sizeof me);
        for (size_t i = 0; i < kWords; ++i) {
          const uint32_t v = pattern(i);
          std::memcpy(p + sizeof me + 4 * i, &v, 4);
        }
      },
      why_not);
  if (group->local_size() == 1) {  // one process: nothing to share, and nothing filled
    EXPECT_FALSE(block);
    EXPECT_EQ(why_not, "one process on this node");
    EXPECT_EQ(fills, 0);
    return;
  }
  ASSERT_TRUE(block) << why_not;
  EXPECT_EQ(block.size, bytes);
  EXPECT_EQ(fills, group->local_rank() == 0 ? 1 : 0);
  pid_t filler = 0;
  std::memcpy(&filler, block.data.get(), sizeof filler);
  // The first process of the node wrote it; the others see its bytes, not a copy they made.
  if (group->local_rank() == 0)
    EXPECT_EQ(filler, getpid());
  else
    EXPECT_NE(filler, getpid());
  size_t wrong = 0;
  for (size_t i = 0; i < kWords; ++i) {
    uint32_t v = 0;
    std::memcpy(&v, block.data.get() + sizeof(pid_t) + 4 * i, 4);
    wrong += v != pattern(i);
  }
  EXPECT_EQ(wrong, 0u);
  // Mapped from /dev/shm, whose name is gone once every process has mapped it (nothing left behind), and
  // read-only. (The first process removes the name as it leaves the call; the others may leave it sooner.)
  group->barrier();
  const std::string line = mapping_of(block.data.get());
  EXPECT_NE(line.find("/dev/shm/luong-"), std::string::npos) << line;
  EXPECT_NE(line.find("(deleted)"), std::string::npos) << line;
  EXPECT_EQ(line.substr(line.find(' ') + 1, 4), "r--s") << line;
}

TEST(NodeSharedMemory, ABlockLargerThanDevShmIsRefusedOnEveryProcessWithTheReason) {
  auto group = make_test_group();
  // Only on a tmpfs, which refuses a reservation over its size at once: a disk file system may fill itself
  // block by block before it fails.
  struct statfs type {};
  if (statfs("/dev/shm", &type) != 0 || type.f_type != TMPFS_MAGIC) GTEST_SKIP() << "/dev/shm is not a tmpfs";
  struct statvfs fs {};
  ASSERT_EQ(statvfs("/dev/shm", &fs), 0);
  // 1 GB more than the whole file system: the reservation fails before any page is touched.
  const size_t bytes = static_cast<size_t>(fs.f_blocks) * fs.f_frsize + (size_t{1} << 30);
  bool filled = false;
  std::string why_not;
  const NodeSharedBytes block = share_on_node(
      *group, bytes, [&](std::byte*) { filled = true; }, why_not);
  EXPECT_FALSE(block);
  EXPECT_FALSE(filled);
  if (group->local_size() == 1)
    EXPECT_EQ(why_not, "one process on this node");
  else if (group->local_rank() == 0)
    EXPECT_NE(why_not.find("no room for "), std::string::npos) << why_not;
  else
    EXPECT_NE(why_not.find("did not create /dev/shm/luong-"), std::string::npos) << why_not;
  // And the group goes on: a block that fits is shared after it.
  const NodeSharedBytes next = share_on_node(
      *group, 64, [](std::byte* p) { std::memset(p, 1, 64); }, why_not);
  EXPECT_EQ(static_cast<bool>(next), group->local_size() > 1) << why_not;
}

// Ten pairs of varied lengths, or (a rank whose data differs) with one id more in the last target, or with that
// target's last id changed (the same size).
enum class Variant { kSame, kExtraId, kChangedId };
nmt::ExampleList ten_pairs(Variant v = Variant::kSame) {
  nmt::ExampleList list;
  for (int64_t i = 0; i < 10; ++i) {
    nmt::ExampleIds e;
    for (int64_t k = 0; k <= i % 4; ++k) e.src.push_back(4 + i + k);
    for (int64_t k = 0; k <= (i * 3) % 5; ++k) e.tgt.push_back(100 + i * k);
    if (v == Variant::kExtraId && i == 9) e.tgt.push_back(7);
    if (v == Variant::kChangedId && i == 9) e.tgt.back() += 1;
    e.line = 2 * i + 1;
    list.push_back(e);
  }
  return list;
}

void expect_same_pairs(const nmt::ExampleList& a, const nmt::ExampleList& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(nmt::to_ids(a[i].src), nmt::to_ids(b[i].src)) << i;
    EXPECT_EQ(nmt::to_ids(a[i].tgt), nmt::to_ids(b[i].tgt)) << i;
    EXPECT_EQ(a[i].line, b[i].line) << i;
  }
}

// A /dev/shm/luong-* file, last modified `age_s` seconds ago; its path.
std::string shared_memory_file(const std::string& name, int64_t age_s) {
  const int fd = shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  EXPECT_GE(fd, 0) << name << ": " << std::strerror(errno);
  if (fd >= 0) close(fd);
  const std::string path = "/dev/shm/" + name;
  const timespec then{std::time(nullptr) - age_s, 0};
  const timespec times[2] = {then, then};
  EXPECT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
  return path;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// A process killed between creating a block and removing its name leaves the file: the next job's first process
// on the node removes it once it is older than any job's window (an hour, or twice the collective timeout), and
// leaves newer ones alone, which may belong to a job sharing right now.
TEST(NodeSharedMemory, BlocksLeftByKilledJobsAreRemovedOnceNoJobCanStillHoldThem) {
  auto group = make_test_group();
  const std::string tag = std::to_string(getpid());
  if (group->rank() == 0) {
    const std::string stale = shared_memory_file("luong-test-stale-" + tag, 7200),
                      recent = shared_memory_file("luong-test-recent-" + tag, 600);
    const std::vector<std::string> removed = remove_stale_blocks(std::chrono::hours(1));
    EXPECT_NE(std::find(removed.begin(), removed.end(), stale), removed.end());
    EXPECT_EQ(std::find(removed.begin(), removed.end(), recent), removed.end());
    EXPECT_FALSE(exists(stale));
    EXPECT_TRUE(exists(recent));
    shm_unlink(("/luong-test-recent-" + tag).c_str());
  }
  group->barrier();
  // share_on_node does it on the node's first process before creating its block (a node of several processes).
  std::string left;
  if (group->local_rank() == 0) left = shared_memory_file("luong-test-left-" + tag, 7200);
  std::string why_not;
  const NodeSharedBytes block = share_on_node(
      *group, 64, [](std::byte* p) { std::memset(p, 1, 64); }, why_not);
  if (group->local_rank() == 0) {
    EXPECT_EQ(exists(left), group->local_size() == 1) << "a node of one process shares nothing, and sweeps nothing";
    if (exists(left)) shm_unlink(left.substr(8).c_str());
  }
}

TEST(SharedExampleList, ReadsTheNodesCopyWithTheSamePairsAndRefusesAdditions) {
  auto group = make_test_group();
  const nmt::ExampleList expected = ten_pairs();
  nmt::ExampleList list = ten_pairs();
  const size_t bytes = list.bytes();
  std::string why_not;
  const bool shared = list.share_on_node(*group, why_not);
  EXPECT_EQ(shared, group->local_size() > 1) << why_not;
  EXPECT_EQ(list.shared(), shared);
  EXPECT_EQ(list.bytes(), bytes);
  expect_same_pairs(list, expected);
  if (!shared) return;
  EXPECT_NE(mapping_of(list[0].src.data()).find("/dev/shm/luong-"), std::string::npos);
  // A copy reads the same block, and keeps it mapped after the original is gone.
  auto copy = std::make_unique<nmt::ExampleList>(list);
  list = nmt::ExampleList();
  EXPECT_TRUE(copy->shared());
  expect_same_pairs(*copy, expected);
  try {
    copy->push_back(nmt::ExampleIds{{5}, {6}, 1});
    ADD_FAILURE() << "a shared list took a pair";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shared with other processes cannot be added to"), std::string::npos)
        << e.what();
  }
  // Sharing again is refused on every rank, collectively.
  EXPECT_FALSE(copy->share_on_node(*group, why_not));
  EXPECT_EQ(why_not, "the list is shared already");
}

TEST(SharedExampleList, AProcessWhosePairsDifferKeepsItsOwn) {
  auto group = make_test_group();
  const bool differs = group->local_rank() == 1;  // the second process of the node, under mpirun -np 2
  // Of another size the block is not even mapped; of the same size with another id it is compared away.
  for (const auto& [variant, reason] :
       {std::pair{Variant::kExtraId, std::string("bytes, not this process's")},
        std::pair{Variant::kChangedId, std::string("pairs differ from those of the node's first process")}}) {
    const Variant mine = differs ? variant : Variant::kSame;
    nmt::ExampleList list = ten_pairs(mine);
    std::string why_not;
    const bool shared = list.share_on_node(*group, why_not);
    if (group->local_size() == 1) {
      EXPECT_FALSE(shared);
      continue;
    }
    EXPECT_EQ(shared, !differs) << why_not;
    EXPECT_EQ(list.shared(), !differs);
    if (differs) {
      EXPECT_NE(why_not.find(reason), std::string::npos) << why_not;
    }
    expect_same_pairs(list, ten_pairs(mine));  // its own pairs, untouched
  }
}

}  // namespace
}  // namespace luong::testing
