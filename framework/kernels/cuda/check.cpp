#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cuda/check.h"

#include <cstring>

#include "framework/core/error.h"

namespace luong::cuda::detail {
namespace {

// The path from the project root, so messages are stable across machines (as fail_check does).
const char* relative(const char* file) {
  const char* rel = std::strstr(file, "framework/");
  return rel ? rel : file;
}

}  // namespace

void fail_cuda(cudaError_t e, const char* call, const char* file, int line) {
  throw Error(str(call, " failed: ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ") at ", relative(file), ":",
                  line));
}

void fail_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  throw Error(str(call, " failed: ", cublasGetStatusName(s), " (", cublasGetStatusString(s), ") at ", relative(file),
                  ":", line));
}

}  // namespace luong::cuda::detail
#endif  // LUONG_WITH_CUDA
