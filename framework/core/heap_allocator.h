// Which malloc the process runs on, for logs, benchmarks and the test that the build's choice took effect.
//
// Why it matters: the engine makes a few thousand small host objects per training step (nodes, edges,
// tensor handles; docs/PERFORMANCE.md "The engine's host time"), allocated in the forward pass and all freed
// in the backward pass. That pattern overflows glibc's per-thread cache at once, and every request of 1 KB or
// more then makes glibc merge its fast bins (malloc_consolidate). Builds link jemalloc when it is found
// (CMake option LUONG_JEMALLOC), which serves the pattern from per-size slabs.
#pragma once
#include <string>

namespace luong {

// The shared object that defines the process's `malloc` ("libjemalloc.so.2", "libc.so.6", or the program
// itself for a static allocator), with jemalloc's version when it is jemalloc: e.g. "jemalloc 5.3.0".
std::string heap_allocator_name();

// True when the process's malloc is jemalloc's.
bool heap_allocator_is_jemalloc();

}  // namespace luong
