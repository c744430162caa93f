// The LSTM cell's kernels for 512-bit vectors: lstm_cell_body.h compiled with -march=x86-64-v4 (CMakeLists.txt
// sets the flag on every *_avx512.cpp). lstm_cell.cpp calls them where wide_vectors() says so.
#define LUONG_CPU_ISA x86_v4
#include "framework/kernels/cpu/lstm_cell_body.h"

namespace luong::cpu::x86_v4 {

template void lstm_cell_forward<float>(int64_t, int64_t, const float*, const float*, float*, float*, float*,
                                       const float*);
template void lstm_cell_backward<float>(int64_t, int64_t, const float*, const float*, const float*, const float*,
                                        const float*, float*, float*, bool);

}  // namespace luong::cpu::x86_v4
