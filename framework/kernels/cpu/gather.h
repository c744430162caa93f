// Row gathers and scatters (embedding lookup and its backward) and the strided block copies behind
// concat, slice and transpose.
#pragma once
#include <cstdint>

namespace luong::cpu {

// out[i, :] = table[ids[i], :] for n ids; ids outside [0, rows) are reported through the return value
// (the index of the first bad id, or -1).
template <class T> int64_t embedding_forward(int64_t n, int64_t dim, int64_t rows, const int64_t* ids, const T* table, T* out);
// out[i] = src[index[i]] for n indices the caller knows to be in range (no check: nothing to read back).
template <class T> void gather(int64_t n, const int64_t* index, const T* src, T* out);
// gtable[ids[i], :] += gout[i, :], skipping ids == padding_idx. Sequential over i: deterministic.
template <class T>
void embedding_backward(int64_t n, int64_t dim, const int64_t* ids, int64_t padding_idx, const T* gout, T* gtable);

// Copies a (outer, src_len, inner) block's columns [src_start, src_start + len) into dst (outer, dst_len, inner)
// at column dst_start (the "columns" being the middle dim). With accumulate, adds instead of copying.
template <class T>
void copy_block(int64_t outer, int64_t inner, int64_t len, const T* src, int64_t src_len, int64_t src_start, T* dst,
                int64_t dst_len, int64_t dst_start, bool accumulate);
// Writes count contiguous parts one after another into dst (part i has bytes[i] bytes): the row-stacked
// operands of a deferred weight gradient (ops/tensor_math.cpp) in one call instead of a copy per part, which on
// CUDA was one cudaMemcpyAsync each, about 1,000 host calls in a step of the paper's model.
void concat_parts(int64_t count, const void* const* src, const int64_t* bytes, void* dst);
// Swaps dims 1 and 3 of an (outer, a, mid, b, inner) layout into (outer, b, mid, a, inner); with accumulate, adds.
template <class T>
void transpose(int64_t outer, int64_t a, int64_t mid, int64_t b, int64_t inner, const T* src, T* dst, bool accumulate);

}  // namespace luong::cpu
