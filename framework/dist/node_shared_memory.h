// One read-only copy of a block of bytes for all the processes of a node.
//
// Every rank of a data-parallel job holds data that is the same on all of them (the encoded training corpus:
// about 1.2 GB for WMT'14 English-German); eight GPUs on a node would hold eight copies. share_on_node gives
// the processes of each node one copy in POSIX shared memory (/dev/shm): the node's first process (local rank
// 0) creates and fills it, the others map it read-only, and the name is removed as soon as every process has
// mapped it, so the memory goes when the last process unmaps it or exits.
//
//   std::string why_not;
//   NodeSharedBytes region = share_on_node(group, bytes, [&](std::byte* p) { fill(p); }, why_not);
//   if (!region) ... keep the private copy; why_not says why (one process on the node, no room in /dev/shm)
//
// Collective: every rank of `group` calls it, in the same order relative to the group's other collectives.
// Nothing here checks that a process's mapping holds what it would have computed: callers that can compare
// (ExampleList::share_on_node) do, and keep their own copy otherwise.
//
// The name lives from its creation to the group's barrier after every process has mapped it (the fill and a
// mapping, well under a second for a gigabyte). A process killed inside that window leaves
// /dev/shm/luong-<job>-<n> behind; the next job that shares on the node removes it (remove_stale_blocks).
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/dist/process_group.h"

namespace luong {

// A mapping of a node's shared block; unmapped when the last copy of the pointer goes.
struct NodeSharedBytes {
  std::shared_ptr<const std::byte> data;  // null when not shared
  size_t size = 0;
  explicit operator bool() const { return data != nullptr; }
};

// Null, with why_not set, on a group of one process per node (nothing to share), when the node's first
// process cannot create the block (no /dev/shm, or not `bytes` free in it), or when this process cannot map it
// or finds it of another size. `fill` runs only on the node's first process, on writable memory of `bytes`.
// `bytes` 0 shares nothing.
NodeSharedBytes share_on_node(ProcessGroup& group, size_t bytes, const std::function<void(std::byte*)>& fill,
                              std::string& why_not);

// Removes this user's /dev/shm/luong-* files last modified more than `older_than` ago and returns their paths.
// No running job holds such a name that long: it is removed once the job's processes pass the barrier that
// follows its creation, and a process that waits there longer than the group's timeout ends the job.
// share_on_node calls it on each node's first process before it creates a block, with the larger of an hour
// and twice the group's timeout, and prints a line on stderr for each file removed.
std::vector<std::string> remove_stale_blocks(std::chrono::seconds older_than);

}  // namespace luong
