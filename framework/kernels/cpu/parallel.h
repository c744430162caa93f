// OpenMP helpers. Work is split into fixed-size blocks independent of the thread count, and reductions
// combine block partials in block order, so every result is bitwise identical for any number of threads.
#pragma once
#include <cstddef>
#include <cstdint>

namespace luong::cpu {

// Below this many elements a loop runs on one thread: the fork/join costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;
// Block size for deterministic reductions.
constexpr int64_t kReduceBlock = 1 << 12;

void set_num_threads(int n);
int num_threads();

// memset(dst, 0, bytes) and memcpy(dst, src, bytes), split over the threads from 1 MiB up (gradient buffers
// of the size of an embedding table: one thread reaches about half of the two cores' memory bandwidth).
void zero_bytes(void* dst, size_t bytes);
void copy_bytes(void* dst, const void* src, size_t bytes);

}  // namespace luong::cpu
