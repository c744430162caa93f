// Writing a whole output file (translations, reports) so that a reader never sees half of it and a failure is said.
#pragma once
#include <string>

namespace luong {

// Checks, before long work, that `path` can later be written: its directory exists and it is not a directory
// itself. Errors: "<what> 'p' cannot be written: <reason>".
void check_output_path(const std::string& path, const std::string& what);

// Writes `text` to `<path>.tmp.<pid>`, flushes it to disk and renames it over `path`, so `path` holds either its
// old contents or all of `text` (a full disk or a crash leaves no truncated file behind). Errors as above.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& what);

}  // namespace luong
