// The loss kernel for 512-bit vectors: cross_entropy_body.h compiled with -march=x86-64-v4 (CMakeLists.txt sets the
// flag on every *_avx512.cpp). cross_entropy_inplace.cpp calls it where wide_vectors() says so.
#define LUONG_CPU_ISA x86_v4
#include "framework/kernels/cpu/cross_entropy_body.h"

namespace luong::cpu::x86_v4 {

template void cross_entropy_inplace<float>(int64_t, int64_t, float*, const float*, const int64_t*, int64_t, float,
                                           float*, bool);

}  // namespace luong::cpu::x86_v4
