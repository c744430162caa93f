// A checkpoint's seal: a CRC-32 of every byte of the file after its first 512, written into those 512 bytes
// (HDF5's user block, which the library reserves at the start of the file and never reads or writes) once the
// HDF5 file is closed, and checked before HDF5 parses anything.
//
// Why outside HDF5: the entry checksum (docs/CHECKPOINT.md, "Integrity") is only read after HDF5 has parsed the
// file, and HDF5 1.10 can crash (SIGSEGV in H5HG_read) or loop forever on a file with one damaged byte in its
// metadata. With the seal such a file is refused, naming it, and `--resume auto` moves on to an older one.
#pragma once
#include <cstddef>
#include <string>

namespace luong {

constexpr size_t kCheckpointSealBytes = 512;

// Writes the seal into the user block of the closed HDF5 file at `path` (created with a 512-byte user
// block). Throws naming `path` on an I/O error.
void seal_checkpoint_file(const std::string& path);

// Throws "checkpoint <path>: checksum mismatch over the file's bytes (...)" when the file carries a seal that
// does not match its bytes, or has a user block whose seal is damaged. A file whose HDF5 data starts at byte 0
// (written before seals, or by another tool) has no seal and passes: its entry checksum still applies.
void check_checkpoint_seal(const std::string& path);

}  // namespace luong
