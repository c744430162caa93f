#include "framework/core/heap_allocator.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

namespace luong {
namespace {

// The file name of the object defining the `malloc` every library in the process calls: the first in the
// global lookup order (what the dynamic linker binds libc's own callers and OpenBLAS's to), not ours alone.
std::string malloc_owner() {
  void* fn = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info{};
  if (!fn || !dladdr(fn, &info) || !info.dli_fname) return "unknown";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

}  // namespace

bool heap_allocator_is_jemalloc() {
  // jemalloc's control interface is defined by the same object as malloc: asking both rules out an
  // unrelated library that merely exports one of the names.
  void* ctl = dlsym(RTLD_DEFAULT, "mallctl");
  void* fn = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info a{}, b{};
  return ctl && fn && dladdr(ctl, &a) && dladdr(fn, &b) && a.dli_fbase == b.dli_fbase;
}

std::string heap_allocator_name() {
  if (!heap_allocator_is_jemalloc()) return malloc_owner();
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  const char* version = nullptr;
  size_t size = sizeof(version);
  // jemalloc's version reads "5.3.0-0-g<commit>": the release is what a report needs.
  if (mallctl("version", &version, &size, nullptr, 0) == 0 && version) {
    const std::string full = version;
    return "jemalloc " + full.substr(0, full.find('-'));
  }
  return "jemalloc";
}

}  // namespace luong
