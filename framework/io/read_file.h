// Reading a whole input file (a config, a sweep spec, a corpus) with every failure said.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace luong {

// A descriptor open for reading (O_CLOEXEC) on the file at `path`, which the caller closes (UniqueFd). Errors:
// "<what> 'p' cannot be read: it is a directory" (open(2) accepts a directory and only the first read fails,
// with a bare "Is a directory") and "<what> 'p' cannot be read: <reason>".
int open_file_for_reading(const std::string& path, const std::string& what);

// All bytes of the file at `path`. Errors start with `what` and the quoted path: "<what> 'p' cannot be read:
// <reason>" when it cannot be opened or a read fails part-way (EIO: a C++ stream reports that as the end of
// the file, which turned a damaged config into the defaults and a damaged corpus into a line-count mismatch),
// and "<what> 'p' is larger than N MiB" past `max_bytes` (/dev/zero as a config would fill the memory).
std::string read_whole_file(const std::string& path, const std::string& what, size_t max_bytes = SIZE_MAX);

}  // namespace luong
