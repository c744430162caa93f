// save_checkpoint: validates names, writes every entry to a temp file, then fsync + rename.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>

#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_checksum.h"
#include "framework/io/checkpoint_seal.h"
#include "framework/io/hdf5_util.h"

namespace luong {
namespace {

namespace fs = std::filesystem;
using hdf5::Handle;

const std::set<std::string>& reserved_attributes() {
  static const std::set<std::string> names = {"luong_version", "format_version", "created", "checksum",
                                              "checksum_algorithm"};
  return names;
}

void check_name(const std::string& name, const std::string& path) {
  bool ok = !name.empty() && name.front() != '/' && name.back() != '/' && name.find("//") == std::string::npos &&
            name.find('\0') == std::string::npos;
  for (size_t start = 0; ok && start <= name.size();) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    ok = part != "." && part != "..";
    start = end + 1;
  }
  if (!ok) LUONG_FAIL("checkpoint ", path, ": invalid entry name '", name, "' (want non-empty '/'-separated parts)");
}

// Every name becomes an HDF5 path, so no name may appear twice or be the parent group of another.
void validate_names(const StateDict& state, const std::string& path) {
  std::set<std::string> names;
  auto add = [&](const std::string& name) {
    check_name(name, path);
    if (!names.insert(name).second) LUONG_FAIL("checkpoint ", path, ": entry '", name, "' appears in two kinds");
  };
  for (const auto& kv : state.tensors) add(kv.first);
  for (const auto& kv : state.ints) add(kv.first);
  for (const auto& kv : state.floats) add(kv.first);
  for (const auto& kv : state.strings) add(kv.first);
  for (const auto& n : names) {
    auto it = names.lower_bound(n + "/");
    if (it != names.end() && it->compare(0, n.size() + 1, n + "/") == 0)
      LUONG_FAIL("checkpoint ", path, ": entry '", n, "' is also the parent of '", *it, "'");
  }
  for (const auto& [k, v] : state.strings)
    if (v.find('\0') != std::string::npos) LUONG_FAIL("checkpoint ", path, ": string '", k, "' contains a NUL byte");
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class Writer {
 public:
  Writer(const std::string& tmp, const std::string& path) : path_(path) {
    Handle fapl(hdf5::check(H5Pcreate(H5P_FILE_ACCESS), path_, "cannot create file access list"), H5Pclose);
    // STRONG: closing the file closes everything in it, so close() really means "on disk".
    hdf5::check_status(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), path_, "cannot set close degree");
    // The first 512 bytes stay HDF5's user block, for the seal written after closing (checkpoint_seal.h).
    Handle fcpl(hdf5::check(H5Pcreate(H5P_FILE_CREATE), path_, "cannot create file creation list"), H5Pclose);
    hdf5::check_status(H5Pset_userblock(fcpl.get(), kCheckpointSealBytes), path_, "cannot reserve the user block");
    file_ = Handle(hdf5::check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), path_,
                               "cannot create temp file " + tmp),
                   H5Fclose);
    lcpl_ = Handle(hdf5::check(H5Pcreate(H5P_LINK_CREATE), path_, "cannot create link list"), H5Pclose);
    hdf5::check_status(H5Pset_create_intermediate_group(lcpl_.get(), 1), path_, "cannot set intermediate groups");
  }

  void tensor(const std::string& name, const Tensor& t) {
    LUONG_CHECK(t.defined(), "checkpoint ", path_, ": tensor '", name, "' is undefined");
    Tensor stored = t.to(Device::cpu());
    if (stored.dtype() == DType::bf16) stored = stored.to(DType::f32);
    const std::string what = "cannot write tensor '" + name + "' " + stored.describe();
    std::vector<hsize_t> dims(stored.shape().begin(), stored.shape().end());
    Handle space(hdf5::check(dims.empty() ? H5Screate(H5S_SCALAR)
                                           : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                             path_, what),
                 H5Sclose);
    Handle ds = create(name, hdf5::file_type(stored.dtype()), space.get(), what);
    if (stored.numel() > 0)
      hdf5::check_status(
          H5Dwrite(ds.get(), hdf5::memory_type(stored.dtype()), H5S_ALL, H5S_ALL, H5P_DEFAULT, stored.raw()), path_,
          what);
    hdf5::write_string_attribute(ds.get(), "kind", "tensor", path_);
    hdf5::write_string_attribute(ds.get(), "dtype", dtype_name(t.dtype()), path_);
    sum_.add_tensor(name, stored);
  }

  void scalar_int(const std::string& name, int64_t v) {
    Handle ds = scalar(name, H5T_STD_I64LE, "int");
    hdf5::check_status(H5Dwrite(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), path_,
                       "cannot write int '" + name + "'");
    sum_.add_int(name, v);
  }

  void scalar_float(const std::string& name, double v) {
    Handle ds = scalar(name, H5T_IEEE_F64LE, "float");
    hdf5::check_status(H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), path_,
                       "cannot write float '" + name + "'");
    sum_.add_float(name, v);
  }

  void scalar_string(const std::string& name, const std::string& v) {
    Handle type = hdf5::utf8_string_type(path_);
    Handle ds = scalar(name, type.get(), "string");
    const char* ptr = v.c_str();
    hdf5::check_status(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &ptr), path_,
                       "cannot write string '" + name + "'");
    sum_.add_string(name, v);
  }

  void finish(const std::map<std::string, std::string>& metadata) {
    const hid_t root = file_.get();
    hdf5::write_string_attribute(root, "luong_version", LUONG_VERSION, path_);
    hdf5::write_int_attribute(root, "format_version", kCheckpointFormatVersion, path_);
    hdf5::write_string_attribute(root, "created", utc_now(), path_);
    for (const auto& [k, v] : metadata) hdf5::write_string_attribute(root, k, v, path_);
    hdf5::write_string_attribute(root, "checksum_algorithm", "fnv1a64", path_);
    hdf5::write_string_attribute(root, "checksum", checksum_hex(sum_.value()), path_);
    lcpl_.reset();
    hdf5::check_status(H5Fflush(root, H5F_SCOPE_GLOBAL), path_, "cannot flush");
    if (!file_.close()) hdf5::fail(path_, "cannot close the temp file");
  }

 private:
  Handle create(const std::string& name, hid_t type, hid_t space, const std::string& what) {
    const std::string h5path = "/" + name;
    return Handle(hdf5::check(H5Dcreate2(file_.get(), h5path.c_str(), type, space, lcpl_.get(), H5P_DEFAULT,
                                         H5P_DEFAULT),
                              path_, what),
                  H5Dclose);
  }

  Handle scalar(const std::string& name, hid_t type, const char* kind) {
    const std::string what = std::string("cannot write ") + kind + " '" + name + "'";
    Handle space(hdf5::check(H5Screate(H5S_SCALAR), path_, what), H5Sclose);
    Handle ds = create(name, type, space.get(), what);
    hdf5::write_string_attribute(ds.get(), "kind", kind, path_);
    return ds;
  }

  std::string path_;
  Handle file_;
  Handle lcpl_;
  ChecksumBuilder sum_;
};

void fsync_path(const std::string& p, bool directory, const std::string& path) {
  const int fd = ::open(p.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0));
  if (fd < 0) LUONG_FAIL("checkpoint ", path, ": cannot open ", p, " to fsync: ", std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) LUONG_FAIL("checkpoint ", path, ": fsync of ", p, " failed: ", std::strerror(err));
}

}  // namespace

void save_checkpoint(const std::string& path, const StateDict& state,
                     const std::map<std::string, std::string>& metadata, const CheckpointEntryHook& on_entry) {
  hdf5::silence_errors();
  validate_names(state, path);
  for (const auto& kv : metadata)
    if (kv.first.empty() || reserved_attributes().count(kv.first))
      LUONG_FAIL("checkpoint ", path, ": metadata key '", kv.first, "' is empty or reserved");
  // The temp file is renamed over `path`: a device or FIFO there (/dev/null, for a root user) would be replaced.
  if (std::error_code ec; fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    LUONG_FAIL("checkpoint ", path, " exists and is not a regular file; a checkpoint is written only as a file");
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  // A file or symlink already at the temp name (planted, or left by a process that had our pid) would be
  // written through by HDF5's truncating create: removed first (a symlink itself, not its target).
  if (std::error_code ec; fs::is_symlink(tmp, ec) || fs::exists(tmp, ec)) fs::remove(tmp, ec);
  try {
    Writer w(tmp, path);
    auto hook = [&](const std::string& name) {
      if (on_entry) on_entry(name);
    };
    for (const auto& [k, v] : state.tensors) {
      hook(k);
      w.tensor(k, v);
    }
    for (const auto& [k, v] : state.ints) {
      hook(k);
      w.scalar_int(k, v);
    }
    for (const auto& [k, v] : state.floats) {
      hook(k);
      w.scalar_float(k, v);
    }
    for (const auto& [k, v] : state.strings) {
      hook(k);
      w.scalar_string(k, v);
    }
    w.finish(metadata);
    seal_checkpoint_file(tmp);
    fsync_path(tmp, false, path);
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      LUONG_FAIL("checkpoint ", path, ": cannot rename ", tmp, " over it: ", std::strerror(errno));
  } catch (...) {
    std::remove(tmp.c_str());  // the Writer is destroyed (file closed) before we get here
    throw;
  }
  fsync_path(parent.empty() ? "." : parent.string(), true, path);
}

}  // namespace luong
