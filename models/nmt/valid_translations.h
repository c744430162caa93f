// train.valid_translations: each validation's translations kept as <run dir>/valid_translations/step-<N>.txt, one
// line per validation source line, to read how the output changes over training or to test two steps'
// difference (`luong bleu REF -i step-1000.txt step-2000.txt --paired-bs`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace luong {
class ProcessGroup;
}

namespace luong::nmt {

// The file of the validation at `step` in `dir`.
std::string valid_translations_path(const std::string& dir, int64_t step);

// Collective over `group`. Rank r translated lines r, r + W, r + 2W, ... (W = group size) of a validation set of
// `lines` lines: `share` holds those translations in that order. With one process the file is written at once;
// otherwise each rank writes its share beside it (the run directory is shared by the job's processes), and rank
// 0 interleaves the shares into the file once every rank has written, then removes them. Each file is written
// whole or not at all (write_file_atomically), and a validation done again after a resume replaces it.
void write_valid_translations(ProcessGroup& group, const std::string& dir, int64_t step,
                              const std::vector<std::string>& share, size_t lines);

}  // namespace luong::nmt
