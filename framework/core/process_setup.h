// Process-level set-up that must happen before any BLAS call: choosing OpenBLAS's kernels and thread
// counts so users get the machine's fast path without setting environment variables themselves.
#pragma once

namespace luong {

// OpenBLAS 0.3.21 reads OPENBLAS_CORETYPE once, when the library loads, and does not recognise newer
// CPUs (e.g. AMD Zen 4), silently falling back to SSE3 kernels several times slower. When the variable is
// unset and the CPU has AVX-512 (or AVX2), this sets it (SkylakeX / Haswell) and re-executes the program
// so the library loads again with it. It also defaults OPENBLAS_NUM_THREADS and OMP_NUM_THREADS (to this
// process's share of the CPUs, framework/core/cpu_share.h) so the two thread pools do not oversubscribe the
// cores, and GOMP_SPINCOUNT so idle threads spin only briefly (see the .cpp for the measurements). A no-op
// when LUONG_NO_REEXEC=1 or nothing changes.
void configure_process(int argc, char** argv);

// The OpenBLAS core actually in use (e.g. "SkylakeX", "Prescott"), for logs and benchmarks.
const char* blas_core_name();

}  // namespace luong
