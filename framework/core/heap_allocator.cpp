#include "framework/core/heap_allocator.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

namespace luong {
namespace {

// The object defining `symbol` first in the global lookup order: what the dynamic linker binds every library's
// calls to (libc's own callers and OpenBLAS's included), not only luong's. Null fields when nothing defines it.
Dl_info definer(const char* symbol) {
  Dl_info info{};
  void* address = dlsym(RTLD_DEFAULT, symbol);
  if (!address || !dladdr(address, &info)) return Dl_info{};
  return info;
}

}  // namespace

bool heap_allocator_is_jemalloc() {
  // jemalloc's control interface defined by the same object as malloc: asking both rules out an unrelated
  // library that merely exports one of the names (a preloaded malloc shim in front of jemalloc, say).
  const Dl_info ctl = definer("mallctl"), fn = definer("malloc");
  return ctl.dli_fbase && ctl.dli_fbase == fn.dli_fbase;
}

std::string heap_allocator_name() {
  if (heap_allocator_is_jemalloc()) {
    using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
    auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
    const char* version = nullptr;
    size_t size = sizeof(version);
    // jemalloc's version reads "5.3.0-0-g<commit>": the release is what a report needs.
    if (mallctl("version", &version, &size, nullptr, 0) != 0 || !version) return "jemalloc";
    const std::string full = version;
    return "jemalloc " + full.substr(0, full.find('-'));
  }
  const Dl_info fn = definer("malloc");
  if (!fn.dli_fname) return "unknown";
  const char* slash = std::strrchr(fn.dli_fname, '/');
  return slash ? slash + 1 : fn.dli_fname;
}

}  // namespace luong
