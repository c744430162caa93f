// An LD_PRELOAD library for tests/cuda/cublas_loader_test.cpp (ctest's cublas_loader_honours_an_interposer):
// it interposes one cuBLAS function the way tools/diag/launch_census interposes the GEMMs, calling the real
// one through RTLD_NEXT and marking its answer, so the test sees whether luong's lazily loaded cuBLAS
// still reaches an interposer and the interposer still reaches cuBLAS.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>

extern "C" const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  using Fn = const char* (*)(cublasStatus_t);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "cublasGetStatusName"));
  if (!real) return "interposed, but RTLD_NEXT found no cublasGetStatusName";
  thread_local std::string text;
  text = std::string("interposed:") + real(status);
  return text.c_str();
}
